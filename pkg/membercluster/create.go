package membercluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// partialMetadataAccept asks a member to answer a write with the stored
// object's metadata only, in protobuf, as package metadata's Patch does.
const partialMetadataAccept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1," +
	"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

// metadataREST is a REST client configured as package metadata's: its
// answers decode as PartialObjectMetadata.
func metadataREST(cfg *rest.Config) (rest.Interface, error) {
	c := metadata.ConfigFor(cfg)
	c.GroupVersion = &schema.GroupVersion{}
	c.APIPath = "/this-value-should-never-be-sent"
	return rest.RESTClientFor(c)
}

// Create creates obj in a usable member as fieldManager, failing with
// AlreadyExists (409) when an object of its name is there, and returns the
// metadata of what the member stored (in protobuf, as Apply). A first
// write is a create, not an apply, so that a member's own object of the
// same name is never taken over without asking.
func (m *Manager) Create(ctx context.Context, cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, fieldManager string) (*metav1.PartialObjectMetadata, error) {
	clients, err := m.clients(cluster)
	if err != nil {
		return nil, err
	}
	if clients.MetadataREST == nil {
		return nil, fmt.Errorf("cluster %s: no client to create with", cluster)
	}
	body, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return createMetadata(ctx, clients.MetadataREST, gvr, obj.GetNamespace(), body, fieldManager)
}

// createMetadata POSTs body (JSON) and decodes the answer's metadata.
func createMetadata(ctx context.Context, client rest.Interface, gvr schema.GroupVersionResource, namespace string, body []byte, fieldManager string) (*metav1.PartialObjectMetadata, error) {
	result := client.Post().AbsPath(resourcePath(gvr, namespace)...).
		SetHeader("Content-Type", runtime.ContentTypeJSON).
		SetHeader("Accept", partialMetadataAccept).
		Param("fieldManager", fieldManager).
		Body(body).
		Do(ctx)
	if err := result.Error(); err != nil {
		return nil, err
	}
	obj, err := result.Get()
	if runtime.IsNotRegisteredError(err) {
		// A member that does not transform its answers sends the object.
		raw, err := result.Raw()
		if err != nil {
			return nil, err
		}
		var partial metav1.PartialObjectMetadata
		if err := json.Unmarshal(raw, &partial); err != nil {
			return nil, fmt.Errorf("decoding the answer as PartialObjectMetadata: %w", err)
		}
		partial.TypeMeta = metav1.TypeMeta{}
		return &partial, nil
	}
	if err != nil {
		return nil, err
	}
	partial, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return nil, fmt.Errorf("unexpected answer %T, expected PartialObjectMetadata", obj)
	}
	return partial, nil
}

// resourcePath is the path of gvr's collection in namespace.
func resourcePath(gvr schema.GroupVersionResource, namespace string) []string {
	path := []string{"api"}
	if gvr.Group != "" {
		path = []string{"apis", gvr.Group}
	}
	path = append(path, gvr.Version)
	if namespace != "" {
		path = append(path, "namespaces", namespace)
	}
	return append(path, gvr.Resource)
}

// Object is the metadata of a member object and its resource.
type Object struct {
	Resource schema.GroupVersionResource
	metav1.PartialObjectMetadata
}

// NamespaceObjects lists, as metadata, every object in a member's
// namespace of the namespaced resources the member serves and lets the
// federation list (the others it cannot see). Partial discovery is an
// error: what could not be listed might hold something.
func (m *Manager) NamespaceObjects(ctx context.Context, cluster, namespace string) ([]Object, error) {
	clients, err := m.clients(cluster)
	if err != nil {
		return nil, err
	}
	if clients.Discovery == nil {
		return nil, fmt.Errorf("cluster %s: no discovery client", cluster)
	}
	lists, err := clients.Discovery.ServerPreferredNamespacedResources()
	if err != nil {
		return nil, fmt.Errorf("cluster %s: discovery: %w", cluster, err)
	}
	var out []Object
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if !slices.Contains(r.Verbs, "list") {
				continue
			}
			gvr := gv.WithResource(r.Name)
			items, err := clients.Metadata.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
			if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("cluster %s: listing %s in namespace %s: %w", cluster, gvr.Resource, namespace, err)
			}
			for _, it := range items.Items {
				out = append(out, Object{Resource: gvr, PartialObjectMetadata: it})
			}
		}
	}
	return out, nil
}
