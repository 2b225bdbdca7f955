package security_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/poll"
)

// The reasons the controller manager gives for a Cluster it will not
// contact, and for one whose /readyz fails.
const (
	reasonInvalidCredentials = "InvalidCredentials"
	reasonNotReady           = "ClusterNotReady"
)

func init() {
	attacks["credentials: a kubeconfig with an exec plugin is never run"] = credentialsExecPlugin
	attacks["credentials: a tokenFile is never read"] = credentialsTokenFile
	attacks["cluster: an http serverAddress or one with a path is refused"] = clusterServerAddress
	attacks["cluster: a status region with a slash is refused"] = clusterStatusRegion
	attacks["cluster: a member's answer body never reaches status or events"] = clusterAnswerBody
}

// listener is an HTTPS server on 127.0.0.1 that records the Authorization
// header of every request it gets, and answers with answer.
type listener struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []string
}

func (f *fixture) listen(answer http.HandlerFunc) *listener {
	l := &listener{}
	l.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.got = append(l.got, r.Method+" "+r.URL.Path+" Authorization: "+r.Header.Get("Authorization"))
		l.mu.Unlock()
		answer(w, r)
	}))
	f.t.Cleanup(l.srv.Close)
	return l
}

func (l *listener) requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// caPEM is the listener's certificate, to trust it.
func (l *listener) caPEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: l.srv.Certificate().Raw}))
}

// memberAddress is the real member's address, as kubefed join registered it.
func (f *fixture) memberAddress() string {
	f.t.Helper()
	addr := f.admin("get", "cluster", member, "-o", "jsonpath={.spec.serverAddressByClientCIDRs[0].serverAddress}")
	require.True(f.t, strings.HasPrefix(addr, "https://"), addr)
	return addr
}

// registerCluster creates, as the admin (a careless operator), a Cluster at
// address whose credentials Secret in federation-system holds data; both go
// when the attack ends.
func (f *fixture) registerCluster(name, address string, data map[string]string) {
	f.t.Helper()
	secretName := name + "-credentials"
	f.t.Cleanup(func() {
		_, _ = f.as("fed", "delete", "cluster", name, "--ignore-not-found")
		_, _ = f.as("fed", "delete", "secret", "-n", "federation-system", secretName, "--ignore-not-found")
	})
	secret := corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "federation-system", Name: secretName},
		StringData: data,
	}
	out, err := f.applyAs("fed", manifestJSON(f, secret))
	require.NoError(f.t, err, out)
	out, err = f.applyAs("fed", clusterManifest(f, name, address, secretName))
	require.NoError(f.t, err, out)
}

func clusterManifest(f *fixture, name, address, secretName string) string {
	return manifestJSON(f, federationv1beta1.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "federation/v1beta1", Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: federationv1beta1.ClusterSpec{
			ServerAddressByClientCIDRs: []federationv1beta1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: address}},
			SecretRef:                  &corev1.LocalObjectReference{Name: secretName},
		},
	})
}

func manifestJSON(f *fixture, obj any) string {
	b, err := json.Marshal(obj)
	require.NoError(f.t, err)
	return string(b)
}

// kubeconfigWith is a kubeconfig whose current context has the given
// cluster and user fields (flow-mapping bodies).
func kubeconfigWith(cluster, user string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: m, cluster: {%s}}]
users: [{name: m, user: {%s}}]
contexts: [{name: m, context: {cluster: m, user: m}}]
current-context: m
`, cluster, user)
}

// waitReason waits until the Cluster's Ready condition has reason and the
// Cluster has an event of that reason, and returns the condition's message
// and the events' messages.
func (f *fixture) waitReason(name, reason string) (string, string) {
	f.t.Helper()
	var message, events string
	err := poll.Until(context.Background(), converge, fmt.Sprintf("cluster %s to have a Ready condition and an event of reason %s", name, reason), func(context.Context) error {
		out, err := f.as("fed", "get", "cluster", name, "-o",
			`jsonpath={.status.conditions[?(@.type=="Ready")].reason}{"\n"}{.status.conditions[?(@.type=="Ready")].message}`)
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		got, msg, _ := strings.Cut(out, "\n")
		if got != reason {
			return fmt.Errorf("the Ready condition's reason is %q (%s)", got, msg)
		}
		out, err = f.as("fed", "get", "events", "-A", "-o",
			`jsonpath={range .items[*]}{.involvedObject.kind}/{.involvedObject.name}/{.reason}: {.message}{"\n"}{end}`)
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		var mine []string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "Cluster/"+name+"/") {
				mine = append(mine, line)
			}
		}
		if !strings.Contains(strings.Join(mine, "\n"), "Cluster/"+name+"/"+reason+":") {
			return fmt.Errorf("no %s event among %q", reason, mine)
		}
		message, events = msg, strings.Join(mine, "\n")
		return nil
	})
	require.NoError(f.t, err)
	return message, events
}

// credentialsExecPlugin: a kubeconfig whose user runs a command would run it
// as the controller manager, on its host. It is refused, said so on the
// Cluster, and the command never runs.
func credentialsExecPlugin(f *fixture) {
	const name = "evil"
	address := f.memberAddress()
	marker := filepath.Join(f.t.TempDir(), "MARKER")
	exec := fmt.Sprintf(`exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: ["-c", "touch %s"], interactiveMode: Never}`, marker)
	// The member's real CA, so that only the exec plugin is refused.
	secretName := f.admin("get", "cluster", member, "-o", "jsonpath={.spec.secretRef.name}")
	ca := f.admin("get", "secret", "-n", "federation-system", secretName, "-o", `jsonpath={.data.ca\.crt}`)
	require.NotEmpty(f.t, ca)
	f.registerCluster(name, address, map[string]string{
		"kubeconfig": kubeconfigWith(fmt.Sprintf("server: %q, certificate-authority-data: %s", address, ca), exec),
	})

	message, events := f.waitReason(name, reasonInvalidCredentials)
	assert.Contains(f.t, message, "sets [exec]")
	assert.Contains(f.t, events, "sets [exec]")
	assert.NoFileExists(f.t, marker, "the controller manager ran the kubeconfig's exec plugin")
}

// credentialsTokenFile: a kubeconfig whose user names a token file would
// send a file of the controller manager's host to an address of the
// writer's choice. It is refused, and nothing reaches that address.
func credentialsTokenFile(f *fixture) {
	const name = "evil-tokenfile"
	const content = "file-of-the-controller-host-5c0ffee"
	tokenFile := filepath.Join(f.t.TempDir(), "token")
	require.NoError(f.t, os.WriteFile(tokenFile, []byte(content), 0o600))
	l := f.listen(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	// Trusted CA data, so that only the tokenFile stands between the file
	// and the listener.
	cluster := fmt.Sprintf("server: %q, certificate-authority-data: %s", l.srv.URL, base64.StdEncoding.EncodeToString([]byte(l.caPEM())))
	f.registerCluster(name, l.srv.URL, map[string]string{"kubeconfig": kubeconfigWith(cluster, "tokenFile: "+tokenFile)})

	message, _ := f.waitReason(name, reasonInvalidCredentials)
	assert.Contains(f.t, message, "sets [tokenFile]")
	assert.NotContains(f.t, message, content)
	for _, r := range l.requests() {
		assert.NotContains(f.t, r, content, "the token file reached the listener")
	}
	assert.Empty(f.t, l.requests(), "the member was contacted with refused credentials")
}

// clusterServerAddress: an http:// address would send the member's token in
// clear text, and a path would send it to another endpoint of the server.
func clusterServerAddress(f *fixture) {
	for name, address := range map[string]string{
		"evil-http": "http://" + strings.TrimPrefix(f.memberAddress(), "https://"),
		"evil-path": f.memberAddress() + "/any/path",
		"evil-user": strings.Replace(f.memberAddress(), "https://", "https://user:password@", 1),
	} {
		out, err := f.applyAs("fed", clusterManifest(f, name, address, member+"-credentials"))
		require.Error(f.t, err, "%s accepted: %s", address, out)
		assert.ErrorContains(f.t, err, "spec.serverAddressByClientCIDRs[0].serverAddress", address)
		_, err = f.as("fed", "get", "cluster", name)
		assert.ErrorContains(f.t, err, "NotFound", "cluster %s was created", name)
	}
}

// clusterStatusRegion: a region with a slash would become a path in the DNS
// server's keys, in another Service's name.
func clusterStatusRegion(f *fixture) {
	statusPath := "jsonpath={.status.region} {.status.zones}"
	before := f.admin("get", "cluster", member, "-o", statusPath)
	for field, patch := range map[string]string{
		"status.region":   `{"status":{"region":"a/b"}}`,
		"status.zones[0]": `{"status":{"zones":["victim.default"]}}`,
	} {
		out, err := f.as("fed", "patch", "cluster", member, "--subresource=status", "--type=merge", "-p", patch)
		require.Error(f.t, err, out)
		assert.ErrorContains(f.t, err, field)
	}
	assert.Equal(f.t, before, f.admin("get", "cluster", member, "-o", statusPath), "the refused patches changed nothing")
}

// clusterAnswerBody: whatever a member answers, only our words about it
// reach the Cluster's status and events, which every reader of Clusters
// and events sees.
func clusterAnswerBody(f *fixture) {
	const name = "evil-body"
	const secret = "member-answer-9d1e77"
	l := f.listen(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, "[-]etcd failed: "+secret)
	})
	f.registerCluster(name, l.srv.URL, map[string]string{"token": "t", "ca.crt": l.caPEM()})

	message, events := f.waitReason(name, reasonNotReady)
	assert.Contains(f.t, message, "HTTP 503")
	assert.NotEmpty(f.t, l.requests(), "the member was probed")
	assert.NotContains(f.t, events, secret)
	assert.NotContains(f.t, f.admin("get", "cluster", name, "-o", "yaml"), secret)
}
