package memberproxy

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/memberrbac"
)

// ownedTTL is how long a member namespace's answer is kept: kubectl
// describe sends several requests at once, and a namespace an admin adopts
// or releases takes effect within it.
const ownedTTL = 10 * time.Second

// maxOwnedEntries bounds the cache; past it, it starts again empty.
const maxOwnedEntries = 10000

// memberCallTimeout bounds the federation's own calls to a member for the proxy.
const memberCallTimeout = 10 * time.Second

// ownedNamespaces tells whether a member namespace is one the federation
// created or an admin adopted for it: the only ones a tenant's work, and
// so a tenant's look, reaches.
type ownedNamespaces struct {
	federation string
	read       namespaceReader
	now        func() time.Time

	mu      sync.Mutex
	answers map[string]ownedAnswer
}

type ownedAnswer struct {
	err     error
	expires time.Time
}

func newOwnedNamespaces(federation string, read namespaceReader) *ownedNamespaces {
	return &ownedNamespaces{federation: federation, read: read, now: time.Now, answers: map[string]ownedAnswer{}}
}

// check returns nil when namespace in cluster is the federation's, else
// the error to answer with.
func (o *ownedNamespaces) check(ctx context.Context, cluster *federationv1beta1.Cluster, namespace string) error {
	key := string(cluster.UID) + "/" + namespace
	o.mu.Lock()
	a, ok := o.answers[key]
	o.mu.Unlock()
	if ok && o.now().Before(a.expires) {
		return a.err
	}
	ns, err := o.read(ctx, cluster, namespace)
	switch {
	case apierrors.IsNotFound(err):
		err = apierrors.NewNotFound(corev1.Resource("namespaces"), namespace+" (in cluster "+cluster.Name+")")
	case err != nil:
		// Not kept: the member may answer next time.
		return apierrors.NewServiceUnavailable(fmt.Sprintf("cluster %s: reading namespace %s: %v", cluster.Name, namespace, err))
	case !Owned(ns, o.federation):
		err = apierrors.NewForbidden(corev1.Resource("namespaces"), namespace,
			fmt.Errorf("namespace %s in cluster %s is not one federation %q created or an admin adopted for it, so the proxy does not reach it", namespace, cluster.Name, o.federation))
	}
	o.mu.Lock()
	if len(o.answers) >= maxOwnedEntries {
		o.answers = map[string]ownedAnswer{}
	}
	o.answers[key] = ownedAnswer{err: err, expires: o.now().Add(ownedTTL)}
	o.mu.Unlock()
	return err
}

// Owned reports whether member namespace ns was created by federation fed
// or adopted for it.
func Owned(ns *corev1.Namespace, fed string) bool {
	return ns.Labels[memberrbac.CreatedByLabel] == fed || ns.Labels[memberrbac.AdoptedByLabel(fed)] == memberrbac.Adopted
}

// getNamespace reads namespace with cfg.
func getNamespace(ctx context.Context, cfg *rest.Config, namespace string) (*corev1.Namespace, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, memberCallTimeout)
	defer cancel()
	return client.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
}
