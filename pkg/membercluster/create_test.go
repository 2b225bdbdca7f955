package membercluster

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// A member that answers a create of ns/a with its metadata, and a second
// one with 409 AlreadyExists.
func TestCreateAsksForMetadataAndFailsWhenTheObjectExists(t *testing.T) {
	type request struct{ method, path, accept, contentType, fieldManager, body string }
	var got []request
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, request{r.Method, r.URL.Path, r.Header.Get("Accept"), r.Header.Get("Content-Type"), r.URL.Query().Get("fieldManager"), string(body)})
		w.Header().Set("Content-Type", "application/json")
		if len(got) > 1 {
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, "a").Status())
			return
		}
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
			ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", UID: "u1", ResourceVersion: "7"},
		})
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv.Listener = l
	srv.Start()
	defer srv.Close()
	client, err := metadataREST(&rest.Config{Host: srv.URL})
	require.NoError(t, err)

	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "v"}}}
	obj.SetName("a")
	obj.SetNamespace("ns")
	body, err := obj.MarshalJSON()
	require.NoError(t, err)
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	out, err := createMetadata(context.Background(), client, gvr, "ns", body, "fcm")
	require.NoError(t, err)
	assert.Equal(t, "u1", string(out.UID))
	assert.Equal(t, "7", out.ResourceVersion)
	require.Len(t, got, 1)
	assert.Equal(t, request{http.MethodPost, "/api/v1/namespaces/ns/configmaps", partialMetadataAccept, "application/json", "fcm", string(body)}, got[0])

	_, err = createMetadata(context.Background(), client, gvr, "ns", body, "fcm")
	assert.True(t, apierrors.IsAlreadyExists(err), "%v", err)

	assert.Equal(t, []string{"apis", "apps", "v1", "namespaces", "ns", "deployments"},
		resourcePath(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "ns"))
	assert.Equal(t, []string{"api", "v1", "namespaces"}, resourcePath(NamespacesResource, ""))
}
