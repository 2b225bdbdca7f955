package fedenv

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/memberenv"
)

// Fixture is what the e2e suites share: a person using the federation
// through a kubectl context, with its member clusters, inside one (sub)test.
// A suite embeds it in its own fixture, and a subtest's copy sets T.
type Fixture struct {
	T    *testing.T
	User *User
	// Clients are the members' clients, made once each.
	Clients *memberenv.Clients
	// Context is the federation's kubectl context.
	Context string
	// Converge bounds how long propagation may take in the suite's waits.
	Converge time.Duration
}

// NewFixture is the fixture of federation context with the members'
// clients, waiting at most converge.
func NewFixture(t *testing.T, u *User, clients *memberenv.Clients, context string, converge time.Duration) Fixture {
	return Fixture{T: t, User: u, Clients: clients, Context: context, Converge: converge}
}

// In is the fixture against another kubeconfig context: a member's, to
// run kubectl there.
func (f Fixture) In(context string) *Fixture {
	f.Context = context
	return &f
}

// Member is a member's dynamic client.
func (f *Fixture) Member(cluster string) dynamic.Interface {
	f.T.Helper()
	c, err := f.Clients.Dynamic(cluster)
	require.NoError(f.T, err)
	return c
}

// Kubectl runs kubectl against the federation and fails the test on error.
func (f *Fixture) Kubectl(args ...string) string {
	f.T.Helper()
	out, err := f.User.Kubectl().Run(context.Background(), append([]string{"--context=" + f.Context}, args...)...)
	require.NoError(f.T, err)
	return out
}

// Apply runs kubectl apply of manifest at the federation and fails the test
// on error.
func (f *Fixture) Apply(manifest string) {
	f.T.Helper()
	require.NoError(f.T, f.TryApply(manifest), "kubectl apply of\n%s", manifest)
}

// TryApply runs kubectl apply of manifest at the federation.
func (f *Fixture) TryApply(manifest string) error {
	_, err := f.User.Kubectl().RunWithInput(context.Background(), manifest, "--context="+f.Context, "apply", "-f", "-")
	return err
}

// MemberObject reads an object in a member; nil when it is absent.
func (f *Fixture) MemberObject(ctx context.Context, cluster string, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	obj, err := f.Member(cluster).Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

// WaitIn waits until every cluster has the object and check (if any)
// accepts it.
func (f *Fixture) WaitIn(clusters []string, gvr schema.GroupVersionResource, ns, name string, check func(*unstructured.Unstructured) error) {
	f.T.Helper()
	f.WaitInWithin(f.Converge, clusters, gvr, ns, name, check)
}

// WaitInWithin is WaitIn with another deadline.
func (f *Fixture) WaitInWithin(timeout time.Duration, clusters []string, gvr schema.GroupVersionResource, ns, name string, check func(*unstructured.Unstructured) error) {
	f.T.Helper()
	what := fmt.Sprintf("%s %s/%s in %v", gvr.Resource, ns, name, clusters)
	require.NoError(f.T, poll.Until(context.Background(), timeout, what, func(ctx context.Context) error {
		for _, c := range clusters {
			obj, err := f.MemberObject(ctx, c, gvr, ns, name)
			if err != nil {
				return err
			}
			if obj == nil {
				return fmt.Errorf("absent in %s", c)
			}
			if check != nil {
				if err := check(obj); err != nil {
					return fmt.Errorf("%s: %w", c, err)
				}
			}
		}
		return nil
	}))
}

// WaitAbsent waits until no cluster has the object (or it is terminating).
func (f *Fixture) WaitAbsent(clusters []string, gvr schema.GroupVersionResource, ns, name string) {
	f.T.Helper()
	what := fmt.Sprintf("no %s %s/%s in %v", gvr.Resource, ns, name, clusters)
	require.NoError(f.T, poll.Until(context.Background(), f.Converge, what, func(ctx context.Context) error {
		for _, c := range clusters {
			obj, err := f.MemberObject(ctx, c, gvr, ns, name)
			if err != nil {
				return err
			}
			if obj != nil && obj.GetDeletionTimestamp() == nil {
				return fmt.Errorf("still in %s", c)
			}
		}
		return nil
	}))
}

// WaitEvents waits until the federation's events of the object name hold
// every text.
func (f *Fixture) WaitEvents(name string, texts ...string) {
	f.T.Helper()
	require.NoError(f.T, poll.Until(context.Background(), f.Converge, fmt.Sprintf("events of %s with %q", name, texts), func(ctx context.Context) error {
		out, err := f.User.Kubectl().Run(ctx, "--context="+f.Context, "get", "events", "-A", "--field-selector=involvedObject.name="+name)
		if err != nil {
			return err
		}
		for _, text := range texts {
			if !strings.Contains(out, text) {
				return fmt.Errorf("no %q in\n%s", text, out)
			}
		}
		return nil
	}))
}
