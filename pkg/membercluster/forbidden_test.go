package membercluster

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

func TestForbiddenDelayDoublesUpToFiveMinutes(t *testing.T) {
	var got []time.Duration
	d := time.Duration(0)
	for range 12 {
		d = nextForbiddenDelay(d)
		got = append(got, d)
	}
	assert.Equal(t, time.Second, got[0])
	assert.Equal(t, 2*time.Second, got[1])
	assert.Equal(t, 256*time.Second, got[8])
	assert.Equal(t, 5*time.Minute, got[9], "bounded")
	assert.Equal(t, 5*time.Minute, got[11])
}

func TestForbiddenWatchErrorWaitsAndIsRemembered(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "other.example.com", Version: "v1", Resource: "gizmos"}
	w := &watchErrors{cluster: "c1", gvr: gvr}
	forbidden := apierrors.NewForbidden(gvr.GroupResource(), "", errors.New("no rule"))

	start := time.Now()
	w.handle(context.Background(), nil, forbidden)
	assert.GreaterOrEqual(t, time.Since(start), forbiddenFirstDelay, "the reflector's next try waits")
	assert.True(t, w.forbidden.Load())

	// Stopping the informer ends the wait at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	w.handle(ctx, nil, forbidden)
	assert.Less(t, time.Since(start), time.Second)
	assert.Equal(t, 2*forbiddenFirstDelay, w.delay)

	// Another error is the reflector's default, and forgets the back-off.
	w.handle(ctx, cache.NewReflector(&cache.ListWatch{}, nil, cache.NewStore(cache.MetaNamespaceKeyFunc), 0), errors.New("connection refused"))
	assert.False(t, w.forbidden.Load())
	assert.Zero(t, w.delay)
}

func TestAsUnauthorizedReadsTheAuthorizersRefusal(t *testing.T) {
	gizmos := schema.GroupResource{Group: "other.example.com", Resource: "gizmos"}
	user := `User "system:serviceaccount:federation-system:federation-fed"`
	for _, tc := range []struct {
		name string
		err  error
		want Unauthorized
		ok   bool
	}{
		{"create in a namespace", apierrors.NewForbidden(gizmos, "g", errors.New(user+` cannot create resource "gizmos" in API group "other.example.com" in the namespace "e2e"`)),
			Unauthorized{Verb: "create", Resource: "gizmos", Group: "other.example.com"}, true},
		{"get at the cluster scope", apierrors.NewForbidden(gizmos, "g", errors.New(user+` cannot get resource "gizmos" in API group "other.example.com" at the cluster scope`)),
			Unauthorized{Verb: "get", Resource: "gizmos", Group: "other.example.com"}, true},
		{"a subresource, no name", apierrors.NewForbidden(gizmos, "", errors.New(user+` cannot patch resource "gizmos/status" in API group "other.example.com" in the namespace "e2e"`)),
			Unauthorized{Verb: "patch", Resource: "gizmos", Group: "other.example.com"}, true},
		{"the core group", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New(user+` cannot create resource "pods" in API group "" in the namespace "e2e"`)),
			Unauthorized{Verb: "create", Resource: "pods", Group: ""}, true},
		{"wrapped", fmt.Errorf("creating Gizmo e2e/g in cluster c1: %w", apierrors.NewForbidden(gizmos, "g", errors.New(user+` cannot create resource "gizmos" in API group "other.example.com" in the namespace "e2e"`))),
			Unauthorized{Verb: "create", Resource: "gizmos", Group: "other.example.com"}, true},
		{"the member's admission policy", apierrors.NewForbidden(gizmos, "g", errors.New(`ValidatingAdmissionPolicy 'federation-fed' with binding 'federation-fed' denied request: federation "fed" may write only the CustomResourceDefinitions of the groups certs.example.com in this cluster (policy federation-fed)`)), Unauthorized{}, false},
		{"a webhook quoting the authorizer", apierrors.NewForbidden(gizmos, "g", errors.New(`admission webhook "w" denied the request: `+user+` cannot create resource "gizmos" in API group "other.example.com"`)), Unauthorized{}, false},
		{"not a 403", apierrors.NewBadRequest(`gizmos "g" is forbidden: ` + user + ` cannot create resource "gizmos" in API group "other.example.com"`), Unauthorized{}, false},
		{"not an API error", errors.New(`gizmos "g" is forbidden: ` + user + ` cannot create resource "gizmos" in API group "other.example.com"`), Unauthorized{}, false},
		{"nil", nil, Unauthorized{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := AsUnauthorized(tc.err)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestAnUnservedResourceIsRemembered(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "certs.example.com", Version: "v1", Resource: "gadgets"}
	w := &watchErrors{cluster: "c1", gvr: gvr}
	r := cache.NewReflector(&cache.ListWatch{}, nil, cache.NewStore(cache.MetaNamespaceKeyFunc), 0)
	// As the reflector words a list of a resource the member does not serve.
	w.handle(context.Background(), r, fmt.Errorf("failed to list %s: %w", gvr, apierrors.NewNotFound(gvr.GroupResource(), "")))
	assert.True(t, w.unserved.Load())
	assert.False(t, w.forbidden.Load())
	w.handle(context.Background(), r, errors.New("connection refused"))
	assert.False(t, w.unserved.Load(), "another error: not known to be unserved")
}
