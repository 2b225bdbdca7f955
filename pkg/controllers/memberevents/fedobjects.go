package memberevents

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/utils/lru"
)

// How long what was read of a federated object is trusted, and how many
// are remembered.
const (
	fedObjectTTL     = time.Minute
	fedObjectMissTTL = 10 * time.Second
	fedObjectsSize   = 1024
)

// federatedObjects tells the UID of the federated object a copy is of, as
// the federation apiserver has it now: an event is mirrored only onto an
// object that exists there, under the UID the copy records.
type federatedObjects struct {
	client  metadata.Interface
	timeout time.Duration
	now     func() time.Time

	mu    sync.Mutex
	known *lru.Cache
}

type fedObject struct {
	uid     types.UID
	expires time.Time
}

func newFederatedObjects(client metadata.Interface, timeout time.Duration) *federatedObjects {
	return &federatedObjects{client: client, timeout: timeout, now: time.Now, known: lru.New(fedObjectsSize)}
}

// uid returns the UID of the federated object gvr namespace/name, "" when
// there is none.
func (f *federatedObjects) uid(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (types.UID, error) {
	key := gvr.String() + "/" + namespace + "/" + name
	f.mu.Lock()
	v, ok := f.known.Get(key)
	f.mu.Unlock()
	if o, _ := v.(fedObject); ok && f.now().Before(o.expires) {
		return o.uid, nil
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	obj, err := f.client.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	o := fedObject{expires: f.now().Add(fedObjectMissTTL)}
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return "", fmt.Errorf("reading the federated %s %s/%s: %w", gvr.Resource, namespace, name, err)
	default:
		o = fedObject{uid: obj.UID, expires: f.now().Add(fedObjectTTL)}
	}
	f.mu.Lock()
	f.known.Add(key, o)
	f.mu.Unlock()
	return o.uid, nil
}

// forget drops what was read of a federated object: a copy recording
// another UID may be of an object made again since.
func (f *federatedObjects) forget(gvr schema.GroupVersionResource, namespace, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.known.Remove(gvr.String() + "/" + namespace + "/" + name)
}
