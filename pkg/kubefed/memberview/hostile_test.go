package memberview

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A hostile member answers with terminal escapes in a Status message and
// in pod names: kubefed escapes them rather than send them to the terminal.
func TestHostileMemberCannotDriveTheTerminal(t *testing.T) {
	esc := "\x1b]0;PWNED\x07\x1b[2J"
	web := appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{Kind: "Deployment", APIVersion: "apps/v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"},
		Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	evil := testPod("team-a", "web-"+esc, "", "app"+esc)
	f := newFakeFederation(t, map[string]*fakeMember{
		"cluster1": {deployments: []appsv1.Deployment{web}, pods: []corev1.Pod{evil}, logs: map[string]string{"web-" + esc + "/app" + esc: "hi\n"}},
	})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/proxy/api/v1/namespaces/team-a/pods") && strings.Contains(r.Header.Get("Accept"), "as=Table") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"boom \u001b]0;PWNED\u0007\u001b[2J","reason":"InternalError","code":500}`))
			return
		}
		f.serve(w, r)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	f.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	kubeconfig := writeKubeconfig(t, f)
	_, errOut, err := runCommand(context.Background(), "get", "pods", "-n", "team-a", "--kubeconfig="+kubeconfig, "--context=fed")
	require.Error(t, err, "the only member failed")
	assert.Equal(t, "cluster cluster1: boom \\x1b]0;PWNED\\x07\\x1b[2J\n", errOut)
	out, _, err := runCommand(context.Background(), "logs", "deploy/web", "-n", "team-a", "--kubeconfig="+kubeconfig, "--context=fed")
	require.NoError(t, err)
	assert.Equal(t, "[cluster1/web-\\x1b]0;PWNED\\x07\\x1b[2J] hi\n", out)
}
