package membercluster

import (
	"context"
	"errors"
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
