package memberview

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/tunnel/wire"
)

// userToken is the user's federation credential in the tests' kubeconfig.
const userToken = "alice-token"

// fakeMember is what the fake federation's proxy answers for one member.
type fakeMember struct {
	pods        []corev1.Pod
	deployments []appsv1.Deployment
	// logs are the log of each pod's container, by "pod/container".
	logs map[string]string
	// forbidden answers 403 to every request, as the federation does to a
	// tenant with no rights in the member.
	forbidden bool
	// holdFollow keeps a followed log open until the client leaves.
	holdFollow bool
}

// fakeRequest is a request the fake federation received.
type fakeRequest struct {
	path, query, accept string
}

// fakeFederation is a federation apiserver serving a list of Clusters and
// their proxy paths for pods (list, Table, get, log), Deployments, and the
// discovery of a custom resource served without Table.
type fakeFederation struct {
	t   *testing.T
	url string
	// caPEM is the certificate its clients trust.
	caPEM []byte

	mu       sync.Mutex
	members  map[string]*fakeMember
	canList  bool
	requests []fakeRequest
}

func newFakeFederation(t *testing.T, members map[string]*fakeMember) *fakeFederation {
	f := &fakeFederation{t: t, members: members, canList: true}
	srv := httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	f.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return f
}

// received returns the requests whose path starts with prefix.
func (f *fakeFederation) received(prefix string) []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeRequest
	for _, r := range f.requests {
		if strings.HasPrefix(r.path, prefix) {
			out = append(out, r)
		}
	}
	return out
}

func (f *fakeFederation) setCanList(can bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.canList = can
}

func (f *fakeFederation) removeMember(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.members, name)
}

func (f *fakeFederation) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, fakeRequest{path: r.URL.Path, query: r.URL.RawQuery, accept: r.Header.Get("Accept")})
	canList := f.canList
	f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+userToken {
		writeStatus(w, apierrors.NewUnauthorized("no credential"))
		return
	}
	clusters := federationv1beta1.Resource("clusters")
	if r.URL.Path == "/apis/federation/v1beta1/clusters" {
		if !canList {
			writeStatus(w, apierrors.NewForbidden(clusters, "", fmt.Errorf("User \"alice\" cannot list resource \"clusters\"")))
			return
		}
		list := &federationv1beta1.ClusterList{TypeMeta: metav1.TypeMeta{Kind: "ClusterList", APIVersion: "federation/v1beta1"}}
		f.mu.Lock()
		for name := range f.members {
			list.Items = append(list.Items, federationv1beta1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}})
		}
		f.mu.Unlock()
		writeJSON(w, list)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/apis/federation/v1beta1/clusters/")
	name, memberPath, ok2 := strings.Cut(rest, "/proxy")
	f.mu.Lock()
	m, found := f.members[name]
	f.mu.Unlock()
	if !ok || !ok2 || !found || r.URL.Path != wire.ProxyPath(name)+memberPath {
		writeStatus(w, apierrors.NewNotFound(clusters, name))
		return
	}
	m.serve(w, r, memberPath)
}

// serve answers the request for path of the member's API.
func (m *fakeMember) serve(w http.ResponseWriter, r *http.Request, path string) {
	if m.forbidden {
		writeStatus(w, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", fmt.Errorf("User \"alice\" cannot list resource \"pods\" in API group \"\" in the namespace \"team-a\"")))
		return
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case path == "/api":
		writeJSON(w, &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
	case path == "/apis":
		gv := metav1.GroupVersionForDiscovery{GroupVersion: "example.com/v1", Version: "v1"}
		writeJSON(w, &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
			Groups: []metav1.APIGroup{{Name: "example.com", Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}}})
	case path == "/api/v1":
		writeJSON(w, &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "v1",
			APIResources: []metav1.APIResource{{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", ShortNames: []string{"po"}, Verbs: []string{"get", "list"}}}})
	case path == "/apis/example.com/v1":
		writeJSON(w, &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "example.com/v1",
			APIResources: []metav1.APIResource{{Name: "widgets", SingularName: "widget", Namespaced: true, Kind: "Widget", ShortNames: []string{"wd"}, Verbs: []string{"get", "list"}}}})
	case len(parts) == 6 && parts[5] == "widgets":
		writeJSON(w, map[string]any{"apiVersion": "example.com/v1", "kind": "WidgetList", "metadata": map[string]any{},
			"items": []any{map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"name": "blue", "namespace": parts[4], "creationTimestamp": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)}}}})
	case path == "/api/v1/pods" || (len(parts) == 5 && parts[4] == "pods"):
		ns := ""
		if len(parts) == 5 {
			ns = parts[3]
		}
		m.listPods(w, r, ns)
	case len(parts) == 6 && parts[4] == "pods":
		if pod := m.pod(parts[3], parts[5]); pod != nil {
			writeJSON(w, pod)
			return
		}
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, parts[5]))
	case len(parts) == 7 && parts[4] == "pods" && parts[6] == "log":
		m.log(w, r, parts[3], parts[5])
	case len(parts) == 7 && parts[0] == "apis" && parts[1] == "apps" && parts[5] == "deployments":
		for i := range m.deployments {
			if d := &m.deployments[i]; d.Namespace == parts[4] && d.Name == parts[6] {
				writeJSON(w, d)
				return
			}
		}
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, parts[6]))
	default:
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{}, path))
	}
}

func (m *fakeMember) pod(ns, name string) *corev1.Pod {
	for i := range m.pods {
		if p := &m.pods[i]; p.Namespace == ns && p.Name == name {
			return p
		}
	}
	return nil
}

// listPods answers a list of pods, as a Table when asked for one.
func (m *fakeMember) listPods(w http.ResponseWriter, r *http.Request, ns string) {
	selector, err := labels.Parse(r.URL.Query().Get("labelSelector"))
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	fieldSelector, err := fields.ParseSelector(r.URL.Query().Get("fieldSelector"))
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	var pods []corev1.Pod
	for _, p := range m.pods {
		if (ns == "" || p.Namespace == ns) && selector.Matches(labels.Set(p.Labels)) &&
			fieldSelector.Matches(fields.Set{"metadata.name": p.Name, "metadata.namespace": p.Namespace}) {
			pods = append(pods, p)
		}
	}
	if !strings.Contains(r.Header.Get("Accept"), "as=Table") {
		writeJSON(w, &corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: pods})
		return
	}
	table := &metav1.Table{
		TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"},
		ColumnDefinitions: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string"}, {Name: "Ready", Type: "string"}, {Name: "Status", Type: "string"},
			{Name: "Restarts", Type: "string"}, {Name: "Age", Type: "string"}, {Name: "IP", Type: "string", Priority: 1},
		},
	}
	for _, p := range pods {
		meta, _ := json.Marshal(&metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: "meta.k8s.io/v1"},
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
		})
		table.Rows = append(table.Rows, metav1.TableRow{
			Cells:  []any{p.Name, "1/1", string(p.Status.Phase), "0", "5m", p.Status.PodIP},
			Object: runtime.RawExtension{Raw: meta},
		})
	}
	writeJSON(w, table)
}

// log writes a container's log; a followed one is held open until the
// client leaves when holdFollow.
func (m *fakeMember) log(w http.ResponseWriter, r *http.Request, ns, name string) {
	pod := m.pod(ns, name)
	if pod == nil {
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name))
		return
	}
	container := r.URL.Query().Get("container")
	text, ok := m.logs[name+"/"+container]
	if !ok {
		writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", container, name)))
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(text))
	if r.URL.Query().Get("follow") == "true" && m.holdFollow {
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

func writeJSON(w http.ResponseWriter, obj any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(obj)
}

func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	status := err.ErrStatus
	status.Kind, status.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(status.Code))
	_ = json.NewEncoder(w).Encode(&status)
}

// writeKubeconfig writes a kubeconfig whose context fed reaches the fake
// federation as alice, in namespace team-a, and returns its path.
func writeKubeconfig(t *testing.T, f *fakeFederation) string {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	// httptest's certificate is for example.com.
	cfg.Clusters["fed-cluster"] = &clientcmdapi.Cluster{Server: f.url, CertificateAuthorityData: f.caPEM, TLSServerName: "example.com"}
	cfg.AuthInfos["alice"] = &clientcmdapi.AuthInfo{Token: userToken}
	cfg.Contexts["fed"] = &clientcmdapi.Context{Cluster: "fed-cluster", AuthInfo: "alice", Namespace: "team-a"}
	cfg.CurrentContext = "fed"
	require.NoError(t, clientcmd.WriteToFile(*cfg, path))
	return path
}

// runCommand runs a kubefed-like root holding the commands of this
// package, and returns what it printed on stdout and stderr.
func runCommand(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	kubeconfig := ""
	paths := func() *clientcmd.PathOptions {
		opts := clientcmd.NewDefaultPathOptions()
		opts.LoadingRules.ExplicitPath = kubeconfig
		return opts
	}
	root := &cobra.Command{Use: "kubefed", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.PersistentFlags().StringVar(&kubeconfig, "kubeconfig", "", "")
	root.AddCommand(NewKubeconfigCommand(paths), NewGetCommand(paths), NewLogsCommand(paths))
	root.SetArgs(args)
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// testPod is a running pod of containers with labels app=web.
func testPod(ns, name, ip string, containers ...string) corev1.Pod {
	pod := corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "web"}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip},
	}
	for _, c := range containers {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: c})
	}
	return pod
}
