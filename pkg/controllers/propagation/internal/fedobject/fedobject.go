// Package fedobject names and reads the federated objects of one type the
// same way in every room of propagation: their keys, a copy's key, the
// federation-side cache and client, and how messages name them.
package fedobject

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// Key is a federated object's key: namespace/name, or name when it is
// cluster-scoped.
func Key(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// SplitKey is Key undone.
func SplitKey(objKey string) (ns, name string) {
	ns, name, _ = cache.SplitMetaNamespaceKey(objKey)
	return ns, name
}

// CopyKey names one copy: cluster/objKey.
func CopyKey(cluster, objKey string) string { return cluster + "/" + objKey }

// Objects are one federated type's objects at the federation: the type,
// the federation-side cache of it, and a client.
type Objects struct {
	Type   *federatedtypes.Type
	Lister cache.GenericLister
	Client dynamic.Interface
}

// Get returns an object from the federation-side cache.
func (o Objects) Get(ns, name string) (*unstructured.Unstructured, error) {
	var obj any
	var err error
	if o.Type.Namespaced {
		obj, err = o.Lister.ByNamespace(ns).Get(name)
	} else {
		obj, err = o.Lister.Get(name)
	}
	if err != nil {
		return nil, err
	}
	return obj.(*unstructured.Unstructured), nil
}

// Resource is the type's resource at the federation, in namespace ns when
// it is namespaced.
func (o Objects) Resource(ns string) dynamic.ResourceInterface {
	if o.Type.Namespaced {
		return o.Client.Resource(o.Type.Resource).Namespace(ns)
	}
	return o.Client.Resource(o.Type.Resource)
}

// What names an object in messages: "ConfigMap ns/a".
func (o Objects) What(objKey string) string { return o.Type.Kind + " " + objKey }
