package upgrade_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// converge bounds propagation, the members' load balancers and DNS.
const converge = 2 * time.Minute

// quietWindow is how long a restarted federation must write nothing to
// the copies it already had in sync.
const quietWindow = 20 * time.Second

var clusters = []string{"cluster1", "cluster2", "cluster3"}

var (
	namespaces   = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMaps   = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets      = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	services     = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	deployments  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	crds         = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	certificates = schema.GroupVersionResource{Group: "certs.example.com", Version: "v1", Resource: "certificates"}
	clusterRoles = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
)

// copyRef names one copy in the members.
type copyRef struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
}

func (c copyRef) String() string { return fmt.Sprintf("%s %s/%s", c.gvr.Resource, c.namespace, c.name) }

// objects is a mixed set: ConfigMaps and Secrets, a divided Deployment with
// an override, a CRD and one of its resources, a LoadBalancer Service with
// DNS names.
const objects = `apiVersion: v1
kind: Namespace
metadata: {name: up}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: up}
data: {color: blue, size: "3"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: features, namespace: up}
data: {beta: "true"}
---
apiVersion: v1
kind: Secret
metadata: {name: password, namespace: up}
stringData: {password: s3cret}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: up
  annotations:
    federation.kubernetes.io/overrides: '[{"clusters":["cluster1"],"image":{"tag":"2.0"}}]'
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "registry.example/web:1.0"}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: up}
spec:
  type: LoadBalancer
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: certificates.certs.example.com}
spec:
  group: certs.example.com
  scope: Namespaced
  names: {plural: certificates, singular: certificate, kind: Certificate}
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
              dnsNames: {type: array, items: {type: string}}
`

const certificate = `apiVersion: certs.example.com/v1
kind: Certificate
metadata: {name: site, namespace: up}
spec: {dnsNames: [site.example.com]}
`

var copies = []copyRef{
	{namespaces, "", "up"},
	{configMaps, "up", "settings"},
	{configMaps, "up", "features"},
	{secrets, "up", "password"},
	{deployments, "up", "web"},
	{services, "up", "web"},
	{crds, "", "certificates.certs.example.com"},
	{certificates, "up", "site"},
}

const webName = "web.up.fed.svc.example.com."

// TestUpgradeFromThePreviousRelease runs the previous release with three
// members and a mixed set of objects, replaces its binaries with the tree's
// (kubefed stop, then the new kubefed start), and back again: each time
// the members see no write to the copies already in sync, every copy is
// still what the federation holds, and DNS answers the same.
func TestUpgradeFromThePreviousRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters")
	}
	t.Logf("previous release %s (%s); the tree is %s", previous.Version, previous.Commit, fedenv.Version)
	old := fedenv.NewUser(t, previous.Bin)
	env := fedenv.WithMembers(t, old, memberenv.DefaultClusters(3, 1))
	out := old.InitFederation("fed", "--dns-provider=coredns", "--dns-zone-name=example.com.")
	m := regexp.MustCompile(`is answering at: (\S+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	dnsServer := m[1]
	for _, c := range clusters {
		old.MustKubefed("join", c, "--context=fed", "--custom-resource-groups=certs.example.com")
	}
	old.WaitClusterStatus("fed", converge, map[string]string{"cluster1": "Ready", "cluster2": "Ready", "cluster3": "Ready"})
	assert.Contains(t, old.ServerVersion("fed"), previous.Version)

	f := fedenv.NewFixture(t, old, env.Clients(nil), "fed", converge)
	f.Apply(objects)
	require.NoError(t, poll.Until(context.Background(), converge, "the CRD served at the federation", func(ctx context.Context) error {
		return f.TryApply(certificate)
	}))
	for _, c := range copies {
		f.WaitIn(clusters, c.gvr, c.namespace, c.name, nil)
	}
	f.WaitIn([]string{"cluster1"}, deployments, "up", "web", imageIs("registry.example/web:2.0"))
	f.WaitIn([]string{"cluster2", "cluster3"}, deployments, "up", "web", imageIs("registry.example/web:1.0"))
	answers := waitDNS(t, dnsServer, func(a answer) error {
		if len(a.ips) != len(clusters) {
			return fmt.Errorf("answered %v, want an address from each of the %d clusters", a, len(clusters))
		}
		return nil
	})
	fedenv.SettledMemberWrites(t, env, clusters, 5*time.Second, converge)
	versions := copyVersions(t, &f)

	current := *old
	current.Bin = binDir
	step := func(name string, from, to *fedenv.User, version string, then func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			// The last step's writes may still be under way (a copy's
			// update is seen before the writes that follow it).
			mark := fedenv.SettledMemberWrites(t, env, clusters, 5*time.Second, converge)
			from.MustKubefed("stop", "fed")
			to.MustKubefed("start", "fed")
			assert.Contains(t, to.ServerVersion("fed"), version)
			to.WaitClusterStatus("fed", converge, map[string]string{"cluster1": "Ready", "cluster2": "Ready", "cluster3": "Ready"})

			// The restarted controller manager works: a new object arrives.
			probe := "after-" + strings.ReplaceAll(name, " ", "-")
			f.Apply(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: up}\ndata: {k: v}\n", probe))
			f.WaitIn(clusters, configMaps, "up", probe, nil)
			// Then a quiet window: no write to anything but the new object.
			fedenv.NoMemberWritesFor(t, env, clusters, mark, quietWindow, probe)
			// The members' logs do see the federation's writes: the new object's.
			for _, c := range clusters {
				logged, err := env.FederationWritesSince([]string{c}, mark)
				require.NoError(t, err)
				assert.Contains(t, strings.Join(logged, "\n"), "up/"+probe, "the create of %s logged in %s", probe, c)
			}
			t.Logf("%s: no member write to the %d copies in %d clusters for %s after the restart", name, len(copies), len(clusters), quietWindow)
			assert.Equal(t, versions, copyVersions(t, &f), "no copy changed in any member")
			f.WaitIn([]string{"cluster1"}, deployments, "up", "web", imageIs("registry.example/web:2.0"))
			assert.Equal(t, answers, waitDNS(t, dnsServer, func(a answer) error {
				if !slices.Equal(a.ips, answers.ips) {
					return fmt.Errorf("answered %v, was %v", a, answers)
				}
				return nil
			}))
			if then != nil {
				then(t)
			}
			// In sync still: a change at the federation reaches every member.
			f.Kubectl("annotate", "configmap", probe, "-n", "up", "step=done")
			f.WaitIn(clusters, configMaps, "up", probe, func(o *unstructured.Unstructured) error {
				if o.GetAnnotations()["step"] != "done" {
					return fmt.Errorf("annotations %v", o.GetAnnotations())
				}
				return nil
			})
		})
	}
	// The tree's own behaviour: kubefed join --refresh (not in v0.1.0)
	// finds each member joined by the previous release up to date but
	// for what it now records (the custom resource groups), keeping
	// the groups the member was joined with.
	refresh := func(t *testing.T) {
		for _, c := range clusters {
			out := current.MustKubefed("join", c, "--context=fed", "--cluster-context="+c, "--refresh")
			assert.Contains(t, out, fmt.Sprintf("cluster %q", c), out)
			again := current.MustKubefed("join", c, "--context=fed", "--cluster-context="+c, "--refresh")
			assert.Contains(t, again, "is up to date: nothing changed")
		}
		role, err := env.Clients(nil).Dynamic("cluster1")
		require.NoError(t, err)
		got, err := role.Resource(clusterRoles).Get(context.Background(), "federation-fed", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, "certs.example.com", got.GetAnnotations()["federation.kubernetes.io/custom-resource-groups"])
	}
	step("upgrade to the tree", old, &current, fedenv.Version, refresh)
	step("downgrade to the previous release", &current, old, previous.Version, nil)
}

func imageIs(want string) func(*unstructured.Unstructured) error {
	return func(o *unstructured.Unstructured) error {
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		if len(containers) == 0 {
			return fmt.Errorf("no containers")
		}
		if image := containers[0].(map[string]any)["image"]; image != want {
			return fmt.Errorf("image %v, want %s", image, want)
		}
		return nil
	}
}

// copyVersions are the resourceVersions of every copy in every member.
func copyVersions(t *testing.T, f *fedenv.Fixture) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range clusters {
		for _, ref := range copies {
			obj, err := f.MemberObject(context.Background(), c, ref.gvr, ref.namespace, ref.name)
			require.NoError(t, err)
			require.NotNil(t, obj, "%s in %s", ref, c)
			out[c+" "+ref.String()] = obj.GetResourceVersion()
		}
	}
	return out
}

// answer is what the Service's global name resolves to.
type answer struct {
	rcode int
	ips   []string
}

func waitDNS(t *testing.T, server string, check func(answer) error) answer {
	t.Helper()
	var got answer
	require.NoError(t, poll.Until(context.Background(), converge, "DNS answers for "+webName, func(ctx context.Context) error {
		msg := new(dns.Msg)
		msg.SetQuestion(webName, dns.TypeA)
		r, _, err := (&dns.Client{Timeout: 2 * time.Second}).ExchangeContext(ctx, msg, server)
		if err != nil {
			return err
		}
		got = answer{rcode: r.Rcode}
		for _, rr := range r.Answer {
			if a, ok := rr.(*dns.A); ok {
				got.ips = append(got.ips, a.A.String())
			}
		}
		slices.Sort(got.ips)
		return check(got)
	}))
	return got
}
