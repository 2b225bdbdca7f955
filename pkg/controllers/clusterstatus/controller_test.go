package clusterstatus

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/clusterhealth"
	fedfake "github.com/federation-v1/federation/pkg/generated/clientset/versioned/fake"
	fedinformerfactory "github.com/federation-v1/federation/pkg/generated/informers/externalversions"
	"github.com/federation-v1/federation/pkg/membercluster"
)

// countingMember is a member API server on 127.0.0.1 that counts the
// requests it gets and answers /readyz with ok.
type countingMember struct {
	srv      *httptest.Server
	requests atomic.Int32
	ca       string
}

func newCountingMember(t *testing.T) *countingMember {
	m := &countingMember{}
	m.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.requests.Add(1)
		if r.URL.Path == "/readyz" {
			fmt.Fprint(w, "ok")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{},"items":[]}`)
	}))
	t.Cleanup(m.srv.Close)
	m.ca = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: m.srv.Certificate().Raw}))
	return m
}

type controllerFixture struct {
	c        *Controller
	fed      *fedfake.Clientset
	secrets  cache.Indexer
	recorder *record.FakeRecorder
}

func newControllerFixture(t *testing.T, cluster *federationv1beta1.Cluster, secret *corev1.Secret) *controllerFixture {
	client := fedfake.NewSimpleClientset(cluster)
	fed := fedinformerfactory.NewSharedInformerFactory(client, 0)
	kube := kubeinformers.NewSharedInformerFactory(kubefake.NewClientset(), 0)
	require.NoError(t, fed.Federation().V1beta1().Clusters().Informer().GetIndexer().Add(cluster))
	require.NoError(t, kube.Core().V1().Secrets().Informer().GetIndexer().Add(secret))
	recorder := record.NewFakeRecorder(10)
	c, err := New(client, fed.Federation().V1beta1().Clusters(), kube.Core().V1().Secrets(), recorder,
		Options{Period: time.Minute, Timeout: 5 * time.Second, Thresholds: clusterhealth.DefaultThresholds, Workers: 1})
	require.NoError(t, err)
	return &controllerFixture{c: c, fed: client, secrets: kube.Core().V1().Secrets().Informer().GetIndexer(), recorder: recorder}
}

func (f *controllerFixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func (f *controllerFixture) ready(t *testing.T, name string) federationv1beta1.ClusterCondition {
	t.Helper()
	got, err := f.fed.FederationV1beta1().Clusters().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	c := conditionsOf(got.Status)[federationv1beta1.ClusterReady]
	return c
}

func testCluster(name, address string) *federationv1beta1.Cluster {
	return &federationv1beta1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: federationv1beta1.ClusterSpec{
			ServerAddressByClientCIDRs: []federationv1beta1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: address}},
			SecretRef:                  &corev1.LocalObjectReference{Name: name + "-creds"},
		},
	}
}

func credentials(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: federationv1beta1.SystemNamespace, Name: name + "-creds"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// TestRefusedCredentialsAreToldAndNeverUsed plays a careless operator who
// stores a kubeconfig with an exec plugin: the plugin never runs, the
// member gets no request, the Cluster gets one InvalidCredentials event
// and its Ready condition says why.
func TestRefusedCredentialsAreToldAndNeverUsed(t *testing.T) {
	ctx := context.Background()
	m := newCountingMember(t)
	marker := filepath.Join(t.TempDir(), "marker")
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: m, cluster: {server: %q}}]
users: [{name: m, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: ["-c", "touch %s"], interactiveMode: Never}}}]
contexts: [{name: m, context: {cluster: m, user: m}}]
current-context: m
`, m.srv.URL, marker)
	f := newControllerFixture(t, testCluster("evil", m.srv.URL), credentials("evil", map[string]string{membercluster.KubeconfigKey: kubeconfig}))

	require.NoError(t, f.c.sync(ctx, "evil"))
	require.NoError(t, f.c.sync(ctx, "evil"))

	events := f.events()
	var refusals []string
	for _, e := range events {
		if strings.HasPrefix(e, "Warning "+membercluster.ReasonInvalidCredentials+" ") {
			refusals = append(refusals, e)
		}
	}
	require.Len(t, refusals, 1, "one event per refusal, not one per probe: %v", events)
	assert.Contains(t, refusals[0], "exec")
	assert.Contains(t, refusals[0], "federation-system/evil-creds")

	ready := f.ready(t, "evil")
	assert.Equal(t, corev1.ConditionFalse, ready.Status)
	assert.Equal(t, membercluster.ReasonInvalidCredentials, ready.Reason)
	assert.Contains(t, ready.Message, "exec")

	assert.Zero(t, m.requests.Load(), "the member was contacted with refused credentials")
	assert.NoFileExists(t, marker, "the exec plugin ran")
}

// TestStoredHTTPAddressIsRefused: an address written before validation
// existed is refused by the controller too.
func TestStoredHTTPAddressIsRefused(t *testing.T) {
	ctx := context.Background()
	m := newCountingMember(t)
	plain := "http://" + m.srv.Listener.Addr().String()
	f := newControllerFixture(t, testCluster("c1", plain), credentials("c1", map[string]string{membercluster.TokenKey: "t", membercluster.CAKey: m.ca}))

	require.NoError(t, f.c.sync(ctx, "c1"))
	events := f.events()
	require.NotEmpty(t, events)
	assert.Contains(t, strings.Join(events, "\n"), "Warning "+membercluster.ReasonInvalidServerAddress+" ")
	assert.Equal(t, membercluster.ReasonInvalidServerAddress, f.ready(t, "c1").Reason)
	assert.Zero(t, m.requests.Load())
}

// TestFixedCredentialsProbeAgain: once the Secret holds data, the member is
// probed and Ready, and a later refusal is told again.
func TestFixedCredentialsProbeAgain(t *testing.T) {
	ctx := context.Background()
	m := newCountingMember(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("host-secret"), 0o600))
	bad := credentials("c1", map[string]string{membercluster.KubeconfigKey: fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: m, cluster: {server: x}}]
users: [{name: m, user: {tokenFile: %s}}]
contexts: [{name: m, context: {cluster: m, user: m}}]
current-context: m
`, tokenFile)})
	f := newControllerFixture(t, testCluster("c1", m.srv.URL), bad)
	require.NoError(t, f.c.sync(ctx, "c1"))
	assert.Len(t, f.events(), 2, "the refusal and the first verdict")
	assert.Zero(t, m.requests.Load())

	good := credentials("c1", map[string]string{membercluster.TokenKey: "t", membercluster.CAKey: m.ca})
	require.NoError(t, f.secrets.Update(good))
	require.NoError(t, f.c.sync(ctx, "c1"))
	assert.Equal(t, corev1.ConditionTrue, f.ready(t, "c1").Status)
	assert.NotZero(t, m.requests.Load())
	f.events()

	require.NoError(t, f.secrets.Update(bad))
	require.NoError(t, f.c.sync(ctx, "c1"))
	events := f.events()
	require.NotEmpty(t, events)
	assert.Contains(t, events[0], "Warning "+membercluster.ReasonInvalidCredentials+" ")
	assert.Contains(t, events[0], "tokenFile")
	assert.NotContains(t, events[0], "host-secret")
}
