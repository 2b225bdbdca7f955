package apiserver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// maxBody is over the server's request body limit (3 MiB).
const maxBody = 4 << 20

// TestBadInput sends malformed and invalid requests and checks each is
// rejected with the right status and a message naming the problem, and
// that the objects created before are intact afterwards.
func TestBadInput(t *testing.T) {
	k := newKubectl(t, kubectls[len(kubectls)-1], shared.tokenConfig)
	const ns = "bad-input"
	k.must(t, "", "create", "namespace", ns)
	k.must(t, "", "-n", ns, "create", "configmap", "keep", "--from-literal=a=b")
	k.must(t, "", "-n", ns, "create", "deployment", "keep", "--image=nginx")
	k.must(t, fmtManifest("clusters.federation", "keep-cluster", ""), "create", "-f", "-")
	kept := [][3]string{
		{"namespaces", "", ns},
		{"configmaps", ns, "keep"},
		{"deployments.apps", ns, "keep"},
		{"clusters.federation", "", "keep-cluster"},
	}
	identities := func() []string {
		var ids []string
		for _, o := range kept {
			ids = append(ids, k.jsonpath(t, o[0], o[1], o[2], ".metadata.uid")+"/"+k.jsonpath(t, o[0], o[1], o[2], ".metadata.resourceVersion"))
		}
		return ids
	}
	before := identities()

	const jsonType, yamlType = "application/json", "application/yaml"
	configMaps := "/api/v1/namespaces/" + ns + "/configmaps"
	deployments := "/apis/apps/v1/namespaces/" + ns + "/deployments"
	deployment := func(name, annotations, selector, image string) string {
		return fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"annotations":{%s}},
"spec":{"selector":{"matchLabels":{"app":%q}},"template":{"metadata":{"labels":{"app":"web"}},
"spec":{"containers":[{"name":"web","image":%q}]}}}}`, name, annotations, selector, image)
	}
	cases := []struct {
		name, path, contentType, body string
		status                        int
		contains                      []string
	}{
		{"malformed JSON", configMaps, jsonType, `{"apiVersion":"v1","kind":"ConfigMap",`, http.StatusBadRequest, nil},
		{"malformed YAML", configMaps, yamlType, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [x\n", http.StatusBadRequest, nil},
		{"invalid name", configMaps, jsonType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}`,
			http.StatusUnprocessableEntity, []string{"metadata.name"}},
		{"invalid label", configMaps, jsonType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","labels":{"a":"not valid!"}}}`,
			http.StatusUnprocessableEntity, []string{"metadata.labels"}},
		{"bad cluster selector", deployments, jsonType,
			deployment("sel", `"federation.alpha.kubernetes.io/cluster-selector":"[{\"key\":\"a\",\"operator\":\"~\"}]"`, "web", "nginx"),
			http.StatusUnprocessableEntity, []string{"metadata.annotations[federation.alpha.kubernetes.io/cluster-selector]", "unknown operator"}},
		{"cluster selector not JSON", deployments, jsonType,
			deployment("sel2", `"federation.alpha.kubernetes.io/cluster-selector":"cluster=1"`, "web", "nginx"),
			http.StatusUnprocessableEntity, []string{"metadata.annotations[federation.alpha.kubernetes.io/cluster-selector]"}},
		{"bad deployment preferences", deployments, jsonType,
			deployment("prefs", `"federation.kubernetes.io/deployment-preferences":"{\"clusters\":{\"*\":{\"weight\":1,\"extra\":2}}}"`, "web", "nginx"),
			http.StatusUnprocessableEntity, []string{"metadata.annotations[federation.kubernetes.io/deployment-preferences]", "extra"}},
		{"negative replica weight", deployments, jsonType,
			deployment("prefs2", `"federation.kubernetes.io/deployment-preferences":"{\"Clusters\":{\"c1\":{\"Weight\":-1}}}"`, "web", "nginx"),
			http.StatusUnprocessableEntity, []string{"federation.kubernetes.io/deployment-preferences", "negative"}},
		{"selector does not match template", deployments, jsonType, deployment("mismatch", "", "other", "nginx"),
			http.StatusUnprocessableEntity, []string{"spec.template.metadata.labels"}},
		{"container without image", deployments, jsonType, deployment("noimage", "", "web", ""),
			http.StatusUnprocessableEntity, []string{"spec.template.spec.containers[0].image"}},
		{"invalid service port", "/api/v1/namespaces/" + ns + "/services", jsonType,
			`{"apiVersion":"v1","kind":"Service","metadata":{"name":"svc"},"spec":{"ports":[{"port":0}]}}`,
			http.StatusUnprocessableEntity, []string{"spec.ports[0].port"}},
		{"cluster with bad CIDR", "/apis/federation/v1beta1/clusters", jsonType,
			`{"apiVersion":"federation/v1beta1","kind":"Cluster","metadata":{"name":"c"},"spec":{"serverAddressByClientCIDRs":[{"clientCIDR":"nope","serverAddress":"https://x"}]}}`,
			http.StatusUnprocessableEntity, []string{"spec.serverAddressByClientCIDRs[0].clientCIDR"}},
		{"cluster without addresses", "/apis/federation/v1beta1/clusters", jsonType,
			`{"apiVersion":"federation/v1beta1","kind":"Cluster","metadata":{"name":"c"},"spec":{}}`,
			http.StatusUnprocessableEntity, []string{"spec.serverAddressByClientCIDRs"}},
		{"unknown resource", "/api/v1/namespaces/" + ns + "/podtemplates", jsonType, `{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"p"}}`,
			http.StatusNotFound, nil},
		// Served read-only and empty, for kubectl apply --prune's list.
		{"a kind only members hold", "/api/v1/namespaces/" + ns + "/pods", jsonType, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`,
			http.StatusMethodNotAllowed, []string{"MethodNotAllowed"}},
		{"body over the size limit", configMaps, jsonType,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"a":"` + strings.Repeat("x", maxBody) + `"}}`,
			http.StatusRequestEntityTooLarge, nil},
		{"missing namespace", "/api/v1/namespaces/no-such-namespace/configmaps", jsonType,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`, http.StatusNotFound, []string{"no-such-namespace"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := shared.request(t, http.MethodPost, c.path, goodToken, c.contentType, c.body)
			assert.Equal(t, c.status, status, body)
			for _, s := range c.contains {
				assert.Contains(t, body, s)
			}
		})
	}

	t.Run("kubectl names the bad annotation", func(t *testing.T) {
		stderr := k.fails(t, "", "-n", ns, "annotate", "deployment", "keep",
			`federation.kubernetes.io/deployment-preferences={"rebalance":"yes"}`)
		assert.Contains(t, stderr, "federation.kubernetes.io/deployment-preferences")
		k.must(t, "", "-n", ns, "annotate", "deployment", "keep",
			`federation.kubernetes.io/deployment-preferences={"Rebalance":true,"Clusters":{"*":{"Weight":1,"MinReplicas":1,"MaxReplicas":3}}}`,
			`federation.alpha.kubernetes.io/cluster-selector=[{"key":"cluster","operator":"==","values":["1"]}]`)
		k.must(t, "", "-n", ns, "annotate", "deployment", "keep", "federation.kubernetes.io/deployment-preferences-",
			"federation.alpha.kubernetes.io/cluster-selector-")
	})

	// Rejected requests changed nothing; the annotation round trip above
	// changed the deployment's resourceVersion only.
	after := identities()
	for i, o := range kept {
		if o[0] == "deployments.apps" {
			assert.Equal(t, strings.Split(before[i], "/")[0], strings.Split(after[i], "/")[0], "uid of %v", o)
			continue
		}
		assert.Equal(t, before[i], after[i], "uid/resourceVersion of %v", o)
	}
}
