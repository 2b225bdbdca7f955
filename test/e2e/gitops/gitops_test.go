package gitops_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

var (
	members     = []string{"cluster1", "cluster2"}
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	services    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	crds        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	widgets     = schema.GroupVersionResource{Group: "gitops.example.com", Version: "v1", Resource: "widgets"}
)

// converge bounds how long propagation to the members may take here, and
// syncTimeout how long Flux may take to apply a pushed commit and find it
// healthy.
const (
	converge    = 90 * time.Second
	syncTimeout = 2 * time.Minute
)

// The federation ServiceAccount Flux acts as, the team namespace the
// repository's objects go to, and the host cluster Flux runs in (a member).
const (
	gitopsNamespace = "gitops"
	gitopsAccount   = "flux"
	appNamespace    = "web"
	host            = "cluster1"
)

type fixture struct {
	fedenv.Fixture
}

// The repository's first commit: a namespace with a Deployment, a Service,
// a ConfigMap, and a CRD with one of its resources.
var firstCommit = map[string]string{
	"deploy/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n",
	"deploy/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: web-settings, namespace: web}
data: {greeting: hello}
`,
	"deploy/deployment.yaml": deployment("registry.example/web:1.0"),
	"deploy/service.yaml": `apiVersion: v1
kind: Service
metadata: {name: web, namespace: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
`,
	"deploy/crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.gitops.example.com}
spec:
  group: gitops.example.com
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
`,
	"deploy/widget.yaml": `apiVersion: gitops.example.com/v1
kind: Widget
metadata: {name: blue, namespace: web}
spec: {size: 3}
`,
}

func deployment(image string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: %s
        ports: [{containerPort: 8080}]
`, image)
}

func TestFluxManagesTheFederation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters and Flux")
	}
	start := time.Now()
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(len(members), 1))
	u.InitFederation("fed")
	// The repository's CRD is of a group the members are joined for, as a
	// platform team does for the custom resources it propagates.
	for _, c := range members {
		u.MustKubefed("join", c, "--context=fed", "--custom-resource-groups=gitops.example.com")
	}
	u.WaitClusterStatus("fed", 2*time.Minute, map[string]string{"cluster1": "Ready", "cluster2": "Ready"})
	clients := env.Clients(func(cfg *rest.Config) { cfg.Timeout = 10 * time.Second })
	f := &fixture{Fixture: fedenv.NewFixture(t, u, clients, "fed", converge)}
	git := startGitServer(t)
	repo, url := git.repository(t, "web")
	startFlux(t, f, host)
	t.Logf("setting up took %s", time.Since(start))

	// The platform team's federation account for Flux, and its token in a
	// kubeconfig Secret next to Flux in the host, as for any remote cluster.
	f.Kubectl("create", "namespace", gitopsNamespace)
	f.Kubectl("create", "serviceaccount", gitopsAccount, "-n", gitopsNamespace)
	f.Kubectl("create", "clusterrolebinding", "flux-gitops", "--clusterrole=cluster-admin",
		"--serviceaccount="+gitopsNamespace+":"+gitopsAccount)
	f.In(host).Kubectl("create", "secret", "generic", "federation-kubeconfig", "-n", fluxNamespace,
		"--from-literal=value="+f.accountKubeconfig(gitopsNamespace, gitopsAccount))

	first := repo.commit("web: first version", firstCommit)
	f.In(host).Apply(fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: web, namespace: %[1]s}
spec:
  # Pushes are picked up on request (flux reconcile's annotation), not by polling.
  interval: 10m
  url: %[2]s
  ref: {branch: main}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: federation, namespace: %[1]s}
spec:
  interval: 10m
  retryInterval: 5s
  timeout: 2m
  sourceRef: {kind: GitRepository, name: web}
  path: ./deploy
  prune: true
  wait: true
  kubeConfig:
    secretRef: {name: federation-kubeconfig}
`, fluxNamespace, url))

	t.Run("the first commit is applied to the federation, healthy, and propagated to every member", func(t *testing.T) {
		f := f.in(t)
		status := f.waitApplied(first)
		assert.ElementsMatch(t, []string{
			"_web__Namespace", "_widgets.gitops.example.com_apiextensions.k8s.io_CustomResourceDefinition",
			"web_web-settings__ConfigMap", "web_web__Service", "web_web_apps_Deployment", "web_blue_gitops.example.com_Widget",
		}, status.inventory(), "Flux's inventory of what it applied")

		// Flux's own apply, with the federation account's token.
		managers := f.Kubectl("-n", appNamespace, "get", "deployment", "web", "-o", "jsonpath={.metadata.managedFields[*].manager}")
		assert.Contains(t, strings.Fields(managers), "kustomize-controller")
		assert.Equal(t, "2", f.Kubectl("-n", appNamespace, "get", "deployment", "web", "-o", "jsonpath={.status.readyReplicas}"),
			"the federation's aggregated readiness, which Flux's health check read")

		f.WaitIn(members, crds, "", "widgets.gitops.example.com", nil)
		f.WaitIn(members, widgets, appNamespace, "blue", nil)
		f.WaitIn(members, configMaps, appNamespace, "web-settings", nil)
		f.WaitIn(members, services, appNamespace, "web", nil)
		f.WaitIn(members, deployments, appNamespace, "web", image("registry.example/web:1.0"))
	})

	t.Run("a commit that changes the image is followed at the federation and in every member", func(t *testing.T) {
		f := f.in(t)
		second := repo.commit("web: 1.1", map[string]string{"deploy/deployment.yaml": deployment("registry.example/web:1.1")})
		f.requestSync()
		f.waitApplied(second)
		assert.Equal(t, "registry.example/web:1.1",
			f.Kubectl("-n", appNamespace, "get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}"))
		f.WaitIn(members, deployments, appNamespace, "web", image("registry.example/web:1.1"))
	})

	t.Run("objects removed from the repository are pruned from the federation and every member", func(t *testing.T) {
		f := f.in(t)
		third := repo.commit("web: no settings, no widget", map[string]string{"deploy/configmap.yaml": "", "deploy/widget.yaml": ""})
		f.requestSync()
		status := f.waitApplied(third)
		assert.ElementsMatch(t, []string{
			"_web__Namespace", "_widgets.gitops.example.com_apiextensions.k8s.io_CustomResourceDefinition",
			"web_web__Service", "web_web_apps_Deployment",
		}, status.inventory())

		for _, gone := range []string{"configmap/web-settings", "widget.gitops.example.com/blue"} {
			f.notAtFederation(appNamespace, gone)
		}
		f.WaitAbsent(members, configMaps, appNamespace, "web-settings")
		f.WaitAbsent(members, widgets, appNamespace, "blue")
		// What stays in the repository stays everywhere.
		f.WaitIn(members, deployments, appNamespace, "web", image("registry.example/web:1.1"))
		f.WaitIn(members, services, appNamespace, "web", nil)
	})

	t.Run("a team's Flux, with the team's federation account, writes only where the team may", func(t *testing.T) {
		f := f.in(t)
		for _, ns := range []string{"team-a", "team-b"} {
			f.Kubectl("create", "namespace", ns)
		}
		f.Kubectl("create", "serviceaccount", "deployer", "-n", "team-a")
		f.Kubectl("create", "rolebinding", "deployer-edit", "--clusterrole=edit", "--serviceaccount=team-a:deployer", "-n", "team-a")
		f.In(host).Kubectl("create", "secret", "generic", "team-a-kubeconfig", "-n", fluxNamespace,
			"--from-literal=value="+f.accountKubeconfig("team-a", "deployer"))
		repo.commit("team-a: its settings, and some in team-b", map[string]string{
			"team-a/mine.yaml":   settings("team-a"),
			"team-a/theirs.yaml": settings("team-b"),
		})
		f.requestSync()
		f.In(host).Apply(fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: team-a, namespace: %s}
spec:
  interval: 10m
  retryInterval: 5s
  sourceRef: {kind: GitRepository, name: web}
  path: ./team-a
  prune: true
  kubeConfig:
    secretRef: {name: team-a-kubeconfig}
`, fluxNamespace))

		k := f.waitKustomization("team-a", "refused", func(k kustomizationStatus) error {
			if c := k.condition("Ready"); c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "forbidden") {
				return fmt.Errorf("not refused")
			}
			return nil
		})
		assert.Contains(t, k.condition("Ready").Message, `"system:serviceaccount:team-a:deployer"`)
		assert.Contains(t, k.condition("Ready").Message, `"team-b"`)
		f.notAtFederation("team-b", "configmap/settings")
		for _, c := range members {
			obj, err := f.MemberObject(context.Background(), c, configMaps, "team-b", "settings")
			require.NoError(t, err)
			assert.Nil(t, obj, "team-b's namespace in %s", c)
		}

		// The team keeps to its namespace: applied, and propagated.
		fixed := repo.commit("team-a: only its own namespace", map[string]string{"team-a/theirs.yaml": ""})
		f.requestSync()
		f.waitKustomization("team-a", "applied", func(k kustomizationStatus) error {
			if c := k.condition("Ready"); k.Status.LastAppliedRevision != "main@sha1:"+fixed || c == nil || c.Status != metav1.ConditionTrue {
				return fmt.Errorf("not yet applied")
			}
			return nil
		})
		f.WaitIn(members, configMaps, "team-a", "settings", nil)
		f.notAtFederation("team-b", "configmap/settings")
	})
}

// settings is a ConfigMap named settings in ns.
func settings(ns string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}\ndata: {owner: team-a}\n", ns)
}

func (f *fixture) in(t *testing.T) *fixture {
	c := *f
	c.T = t
	return &c
}

// accountKubeconfig is a kubeconfig for the federation with the token of a
// legacy token Secret of the ServiceAccount ns/account (long-lived, as Argo
// CD's cluster secrets and Flux's kubeconfig secrets usually hold).
func (f *fixture) accountKubeconfig(ns, account string) string {
	f.T.Helper()
	secret := account + "-token"
	f.Apply(fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: %s\n  annotations: {kubernetes.io/service-account.name: %s}\ntype: kubernetes.io/service-account-token\n",
		secret, ns, account))
	var token string
	require.NoError(f.T, poll.Until(context.Background(), converge, "the token Secret to be filled", func(ctx context.Context) error {
		out, err := f.User.Kubectl().Run(ctx, "--context=fed", "-n", ns, "get", "secret", secret, "-o", "jsonpath={.data.token}")
		if err != nil || out == "" {
			return fmt.Errorf("no token yet (%v)", err)
		}
		token = out
		return nil
	}))
	decoded, err := base64.StdEncoding.DecodeString(token)
	require.NoError(f.T, err)

	mine, err := clientcmd.LoadFromFile(f.User.Kubeconfig)
	require.NoError(f.T, err)
	require.NoError(f.T, clientcmdapi.FlattenConfig(mine))
	cluster := mine.Clusters[mine.Contexts["fed"].Cluster]
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["federation"] = &clientcmdapi.Cluster{Server: cluster.Server, CertificateAuthorityData: cluster.CertificateAuthorityData}
	cfg.AuthInfos[account] = &clientcmdapi.AuthInfo{Token: string(decoded)}
	cfg.Contexts["federation"] = &clientcmdapi.Context{Cluster: "federation", AuthInfo: account}
	cfg.CurrentContext = "federation"
	b, err := clientcmd.Write(*cfg)
	require.NoError(f.T, err)
	return string(b)
}

// requestSync asks source-controller to fetch the repository now, as
// `flux reconcile source git` does; the Kustomization follows the new
// revision.
func (f *fixture) requestSync() {
	f.T.Helper()
	f.In(host).Kubectl("-n", fluxNamespace, "annotate", "--overwrite", "gitrepository/web",
		"reconcile.fluxcd.io/requestedAt="+time.Now().Format(time.RFC3339Nano))
}

// kustomizationStatus is what the test reads of the Kustomization.
type kustomizationStatus struct {
	Metadata struct{ Generation int64 }
	Status   struct {
		LastAppliedRevision string
		Conditions          []metav1.Condition
		Inventory           struct {
			Entries []struct{ ID string }
		}
	}
}

func (s kustomizationStatus) condition(kind string) *metav1.Condition {
	for i := range s.Status.Conditions {
		if s.Status.Conditions[i].Type == kind {
			return &s.Status.Conditions[i]
		}
	}
	return nil
}

func (s kustomizationStatus) inventory() []string {
	var ids []string
	for _, e := range s.Status.Inventory.Entries {
		ids = append(ids, e.ID)
	}
	return ids
}

// waitApplied waits until the Kustomization "federation" reports commit
// sha applied, Ready and Healthy (Flux's "synced and healthy"), and returns
// its status.
func (f *fixture) waitApplied(sha string) kustomizationStatus {
	f.T.Helper()
	want := "main@sha1:" + sha
	k := f.waitKustomization("federation", "to apply "+want, func(k kustomizationStatus) error {
		if k.Status.LastAppliedRevision != want {
			return fmt.Errorf("not yet applied")
		}
		for _, kind := range []string{"Ready", "Healthy"} {
			if c := k.condition(kind); c == nil || c.Status != metav1.ConditionTrue {
				return fmt.Errorf("not %s", kind)
			}
		}
		return nil
	})
	assert.Contains(f.T, k.condition("Ready").Message, want)
	return k
}

// waitKustomization waits until the Kustomization name's Ready condition is
// of its generation and done accepts its status, and returns the status.
func (f *fixture) waitKustomization(name, what string, done func(kustomizationStatus) error) kustomizationStatus {
	f.T.Helper()
	var k kustomizationStatus
	var seen string
	err := poll.Until(context.Background(), syncTimeout, "Flux's Kustomization "+name+" "+what, func(ctx context.Context) error {
		out, err := f.User.Kubectl().Run(ctx, "--context="+host, "-n", fluxNamespace, "get", "kustomization", name, "-o", "json")
		if err != nil {
			return err
		}
		k = kustomizationStatus{}
		if err := json.Unmarshal([]byte(out), &k); err != nil {
			return err
		}
		seen = fmt.Sprintf("revision %q, conditions %+v", k.Status.LastAppliedRevision, k.Status.Conditions)
		// A failed reconciliation leaves status.observedGeneration behind;
		// its Ready condition has observed the generation.
		if c := k.condition("Ready"); c == nil || c.ObservedGeneration != k.Metadata.Generation {
			return fmt.Errorf("generation %d not observed", k.Metadata.Generation)
		}
		return done(k)
	})
	require.NoError(f.T, err, "last seen: %s", seen)
	return k
}

// notAtFederation checks that kubectl get kindName in ns is NotFound at the
// federation.
func (f *fixture) notAtFederation(ns, kindName string) {
	f.T.Helper()
	out, err := f.User.Kubectl().Run(context.Background(), "--context=fed", "-n", ns, "get", kindName)
	require.Error(f.T, err, "%s is at the federation: %s", kindName, out)
	assert.Contains(f.T, err.Error(), "NotFound", kindName)
}

// image checks a Deployment's only container's image.
func image(want string) func(*unstructured.Unstructured) error {
	return func(obj *unstructured.Unstructured) error {
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		if len(containers) != 1 {
			return fmt.Errorf("%d containers", len(containers))
		}
		if got, _, _ := unstructured.NestedString(containers[0].(map[string]any), "image"); got != want {
			return fmt.Errorf("image %s, want %s", got, want)
		}
		return nil
	}
}
