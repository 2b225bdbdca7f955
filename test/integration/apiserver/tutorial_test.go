package apiserver

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// tutorialDeployment is the v1 federation tutorial's manifest, verbatim.
const tutorialDeployment = `apiVersion: extensions/v1beta1
kind: Deployment
metadata:
  name: nginx-deployment
spec:
  replicas: 2
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:alpine
        ports:
        - containerPort: 80
`

// tutorialService is the v1 federation tutorial's Service, verbatim.
const tutorialService = `apiVersion: v1
kind: Service
metadata:
  name: nginx
  labels:
    app: nginx
spec:
  type: LoadBalancer
  ports:
  - port: 80
    targetPort: 80
    protocol: TCP
    name: http
  selector:
    app: nginx
`

// TestTutorial follows the v1 tutorial: find the default namespace,
// create its extensions/v1beta1 Deployment, scale it, read it back as
// apps/v1 with the selector defaulted from the template labels, and roll it
// back through extensions/v1beta1; create the tutorial's Service and
// describe both.
func TestTutorial(t *testing.T) {
	k := newKubectl(t, kubectls[0], shared.tokenConfig)
	// The server keeps the default and federation-system namespaces, so the
	// tutorial's `kubectl create ns default` finds it there.
	for _, ns := range []string{"default", "federation-system"} {
		waitFor(t, "namespace "+ns+" to be created by the server", func() bool {
			_, _, err := k.run("", "get", "namespace", ns)
			return err == nil
		})
	}
	assert.Contains(t, k.fails(t, "", "create", "ns", "default"), "AlreadyExists")
	k.must(t, tutorialDeployment, "create", "-f", "-")
	k.must(t, "", "scale", "deploy", "nginx-deployment", "--replicas=3")
	assert.Equal(t, "3", k.jsonpath(t, "deployments.apps", "default", "nginx-deployment", ".spec.replicas"))
	assert.Equal(t, "nginx", k.jsonpath(t, "deployments.apps", "default", "nginx-deployment", ".spec.selector.matchLabels.app"))
	assert.Equal(t, "Deployment", k.jsonpath(t, "deployments.v1beta1.extensions", "default", "nginx-deployment", ".kind"))

	// v1 served deployments/rollback under extensions/v1beta1.
	status, body := shared.request(t, http.MethodPost, "/apis/extensions/v1beta1/namespaces/default/deployments/nginx-deployment/rollback",
		goodToken, "application/json", `{"apiVersion":"extensions/v1beta1","kind":"DeploymentRollback","name":"nginx-deployment","rollbackTo":{"revision":1}}`)
	assert.Equal(t, http.StatusCreated, status, body)
	assert.Equal(t, `{"revision":1}`, k.jsonpath(t, "deployments.v1beta1.extensions", "default", "nginx-deployment", ".spec.rollbackTo"))
	out := k.must(t, "", "describe", "deploy", "nginx-deployment")
	assert.Contains(t, out, "Replicas:")

	k.must(t, tutorialService, "create", "-f", "-")
	out = k.must(t, "", "describe", "services", "nginx")
	assert.Contains(t, out, "LoadBalancer")
	assert.Contains(t, out, "http  80/TCP")

	k.must(t, tutorialDeployment+"---\n"+tutorialService, "delete", "-f", "-", "--timeout=60s")
}
