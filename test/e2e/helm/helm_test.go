package helm_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// federationRange is the federation apiserver's default
// --service-cluster-ip-range; the members use 10.96.0.0/16.
const federationRange = "198.18."

func TestHelm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters")
	}
	start := time.Now()
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(3, 2))
	u.InitFederation("fed")
	u.JoinAll("fed", three...)
	clients := env.Clients(func(cfg *rest.Config) { cfg.Timeout = 10 * time.Second })
	f := &fixture{Fixture: fedenv.NewFixture(t, u, clients, "fed", converge), env: env, helm: env.Binaries.Helm, helmHome: t.TempDir()}
	version := strings.TrimSpace(f.mustHelm("version", "--short"))
	require.Regexp(t, `^v3\.\d+\.\d+`, version, "a Helm v3 release, reporting its version")
	t.Logf("setting up took %s; helm %s", time.Since(start), version)

	t.Run("default/kubernetes is the federation's at the federation and each member's own in the members", func(t *testing.T) {
		f := f.in(t)
		out := f.Kubectl("-n", "default", "get", "service", "kubernetes", "-o",
			`jsonpath={.spec.clusterIP} {.spec.ports[0].name} {.spec.ports[0].port} {.metadata.labels.federation\.kubernetes\.io/local}`)
		assert.Equal(t, federationRange+"0.1 https 443 true", out)
		for _, c := range three {
			svc, err := f.MemberObject(context.Background(), c, services, "default", "kubernetes")
			require.NoError(t, err)
			require.NotNil(t, svc, c)
			ip, _, _ := unstructured.NestedString(svc.Object, "spec", "clusterIP")
			assert.Equal(t, "10.96.0.1", ip, "%s keeps its own", c)
			assert.NotContains(t, svc.GetLabels(), federationv1beta1.FederationLabel, "%s's is not a copy", c)
		}
	})

	// Before the stock chart: these need no Deployment at the federation.
	t.Run("a chart with a ConfigMap, a Secret and a LoadBalancer Service, installed with --wait", func(t *testing.T) {
		f := f.in(t)
		chart := writeChart(t, map[string]string{
			"Chart.yaml": "apiVersion: v2\nname: front\nversion: 0.1.0\n",
			"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: {{ .Release.Name }}-settings}
data: {greeting: {{ .Values.greeting | quote }}}
`,
			"templates/secret.yaml": `apiVersion: v1
kind: Secret
metadata: {name: {{ .Release.Name }}-credentials}
stringData: {password: {{ .Values.password | quote }}}
`,
			"templates/service.yaml": `apiVersion: v1
kind: Service
metadata: {name: {{ .Release.Name }}-lb}
spec:
  type: LoadBalancer
  selector: {app: {{ .Release.Name }}}
  ports: [{name: http, port: 80, targetPort: 8080}]
`,
			"templates/headless.yaml": `apiVersion: v1
kind: Service
metadata: {name: {{ .Release.Name }}-peers}
spec:
  clusterIP: None
  selector: {app: {{ .Release.Name }}}
  ports: [{name: peer, port: 7000}]
`,
			"values.yaml": "greeting: hello\npassword: hunter2\n",
		})
		f.mustHelm("install", "front", chart, "--kube-context=fed", "-n", "front", "--create-namespace", "--wait", "--timeout", helmTimeout.String())
		f.noReleaseInMembers("front", true)
		f.helmListsOnlyAtTheFederation("front", "front")

		f.waitMembers(configMaps, "front", "front-settings", "greeting hello", eachMember(func(obj *unstructured.Unstructured) error {
			if obj == nil {
				return fmt.Errorf("no copy")
			}
			if got, _, _ := unstructured.NestedString(obj.Object, "data", "greeting"); got != "hello" {
				return fmt.Errorf("greeting is %q", got)
			}
			return nil
		}))
		f.waitMembers(secrets, "front", "front-credentials", "password hunter2", eachMember(func(obj *unstructured.Unstructured) error {
			if obj == nil {
				return fmt.Errorf("no copy")
			}
			got, _, _ := unstructured.NestedString(obj.Object, "data", "password")
			if got != base64.StdEncoding.EncodeToString([]byte("hunter2")) {
				return fmt.Errorf("password is %q", got)
			}
			return nil
		}))
		// --wait returned: the federation's Service has its virtual address
		// and the members' load-balancer addresses; each member its own.
		out := f.Kubectl("-n", "front", "get", "service", "front-lb", "-o", "jsonpath={.spec.clusterIP} {.status.loadBalancer.ingress[*].ip}")
		fields := strings.Fields(out)
		require.Len(t, fields, 4, "clusterIP and three members' addresses: %q", out)
		assert.True(t, strings.HasPrefix(fields[0], federationRange), "the federation's address: %q", out)
		for _, ip := range fields[1:] {
			assert.True(t, strings.HasPrefix(ip, "127.1."), "a member's load-balancer address: %q", out)
		}
		f.waitMembers(services, "front", "front-lb", "a LoadBalancer with the member's own cluster IP", eachMember(func(obj *unstructured.Unstructured) error {
			if obj == nil {
				return fmt.Errorf("no copy")
			}
			typ, _, _ := unstructured.NestedString(obj.Object, "spec", "type")
			ip, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterIP")
			if typ != "LoadBalancer" || !strings.HasPrefix(ip, "10.96.") {
				return fmt.Errorf("type %q, cluster IP %q", typ, ip)
			}
			return nil
		}))
		f.waitMembers(services, "front", "front-peers", "headless", eachMember(func(obj *unstructured.Unstructured) error {
			if obj == nil {
				return fmt.Errorf("no copy")
			}
			if ip, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterIP"); ip != "None" {
				return fmt.Errorf("cluster IP %q", ip)
			}
			return nil
		}))
		table := f.Kubectl("-n", "front", "get", "service", "front-lb", "--no-headers")
		assert.Equal(t, []string{"front-lb", "LoadBalancer", fields[0]}, strings.Fields(table)[:3], "kubectl get svc: %s", table)

		f.mustHelm("uninstall", "front", "--kube-context=fed", "-n", "front", "--wait", "--timeout", helmTimeout.String())
		f.waitGone(configMaps, "front", "front-settings")
		f.waitGone(secrets, "front", "front-credentials")
		f.waitGone(services, "front", "front-lb")
		f.waitGone(services, "front", "front-peers")
		f.noReleaseInMembers("front", false)
	})

	t.Run("the stock chart: install, upgrade, rollback and uninstall with --wait", func(t *testing.T) {
		f := f.in(t)
		dir := t.TempDir()
		f.mustHelm("create", filepath.Join(dir, "web"))
		chart := filepath.Join(dir, "web")
		appVersion := chartAppVersion(t, chart)
		// As it comes: its own ServiceAccount, which the pods run as.
		common := []string{"--kube-context=fed", "-n", "web", "--wait", "--timeout", helmTimeout.String()}

		// Each step: the members' Deployments as the release says (its
		// replicas divided over them: each holds a copy, maybe of 0), their
		// Services, and never a release Secret in a member.
		check := func(step string, replicas int64, tag string) {
			t.Helper()
			f.noReleaseInMembers("web", true)
			image := "nginx:" + tag
			f.waitMembers(deployments, "web", "web", fmt.Sprintf("%s: %d replicas of %s in all", step, replicas, image), func(objs map[string]*unstructured.Unstructured) error {
				var total int64
				got := map[string]string{}
				for _, c := range three {
					obj := objs[c]
					if obj == nil {
						return fmt.Errorf("%s: no copy", c)
					}
					n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
					if account, _, _ := unstructured.NestedString(obj.Object, "spec", "template", "spec", "serviceAccountName"); account != "web" {
						return fmt.Errorf("%s: pods run as service account %q", c, account)
					}
					containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
					img := ""
					if len(containers) == 1 {
						img, _, _ = unstructured.NestedString(containers[0].(map[string]any), "image")
					}
					total += n
					got[c] = fmt.Sprintf("%d of %s", n, img)
					if img != image {
						return fmt.Errorf("members hold %v", got)
					}
				}
				if total != replicas {
					return fmt.Errorf("members hold %v", got)
				}
				return nil
			})
			f.waitMembers(accounts, "web", "web", step+": the chart's ServiceAccount", eachMember(func(obj *unstructured.Unstructured) error {
				if obj == nil {
					return fmt.Errorf("no copy")
				}
				return nil
			}))
			f.waitMembers(services, "web", "web", step+": port 80 to http, the member's own cluster IP", eachMember(func(obj *unstructured.Unstructured) error {
				if obj == nil {
					return fmt.Errorf("no copy")
				}
				ip, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterIP")
				ports, _, _ := unstructured.NestedSlice(obj.Object, "spec", "ports")
				if len(ports) != 1 || fmt.Sprint(ports[0].(map[string]any)["port"]) != "80" || ports[0].(map[string]any)["targetPort"] != "http" || !strings.HasPrefix(ip, "10.96.") {
					return fmt.Errorf("ports %v, cluster IP %q", ports, ip)
				}
				return nil
			}))
			ip := f.Kubectl("-n", "web", "get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")
			assert.True(t, strings.HasPrefix(ip, federationRange), "%s: the federation's address %q", step, ip)
		}

		f.mustHelm(append([]string{"install", "web", chart, "--create-namespace", "--set", "replicaCount=3"}, common...)...)
		check("install", 3, appVersion)
		f.helmListsOnlyAtTheFederation("web", "web")

		f.mustHelm(append([]string{"upgrade", "web", chart, "--set", "replicaCount=6", "--set", "image.tag=1.25"}, common...)...)
		check("upgrade", 6, "1.25")

		f.mustHelm("rollback", "web", "1", "--kube-context=fed", "-n", "web", "--wait", "--timeout", helmTimeout.String())
		check("rollback", 3, appVersion)
		history := f.mustHelm("history", "web", "--kube-context=fed", "-n", "web")
		assert.Regexp(t, `(?m)^3\s.*deployed\s.*Rollback to 1`, history)

		f.mustHelm("uninstall", "web", "--kube-context=fed", "-n", "web", "--wait", "--timeout", helmTimeout.String())
		f.waitGone(deployments, "web", "web")
		f.waitGone(services, "web", "web")
		f.waitGone(accounts, "web", "web")
		f.noReleaseInMembers("web", false)
		assert.Empty(t, strings.TrimSpace(f.mustHelm("list", "--kube-context=fed", "-n", "web", "-q")))
	})
}

// writeChart writes a chart's files into a new folder and returns it.
func writeChart(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "chart")
	for name, content := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	return dir
}

// chartAppVersion reads the appVersion `helm create` wrote, which is the
// stock chart's default image tag.
func chartAppVersion(t *testing.T, chart string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(chart, "Chart.yaml"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "appVersion:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	t.Fatalf("no appVersion in %s", b)
	return ""
}
