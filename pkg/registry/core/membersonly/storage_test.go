package membersonly

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/warning"
	api "k8s.io/kubernetes/pkg/apis/core"
)

// recorder collects the warnings a request would send.
type recorder []string

func (r *recorder) AddWarning(_, text string) { *r = append(*r, text) }

func withWarnings() (context.Context, *recorder) {
	r := &recorder{}
	return warning.WithWarningRecorder(context.Background(), r), r
}

func TestStoresAreTheKindsOfKubectlsPruneListTheFederationLacks(t *testing.T) {
	stores := Stores()
	assert.ElementsMatch(t, []string{"pods", "endpoints", "replicationcontrollers", "persistentvolumes"}, slices.Collect(maps.Keys(stores)))
	for name, s := range stores {
		_, writes := s.(rest.Creater)
		assert.False(t, writes, "%s is read-only", name)
		_, deletes := s.(rest.GracefulDeleter)
		assert.False(t, deletes, "%s is read-only", name)
	}
	assert.False(t, stores["persistentvolumes"].(rest.Scoper).NamespaceScoped())
	assert.True(t, stores["pods"].(rest.Scoper).NamespaceScoped())
}

func TestListIsEmptyAndWarnsOnlyAPerson(t *testing.T) {
	pods := Stores()["pods"].(*REST)
	ctx, warned := withWarnings()
	list, err := pods.List(ctx, &metainternalversion.ListOptions{})
	require.NoError(t, err)
	require.IsType(t, &api.PodList{}, list)
	items, err := meta.ExtractList(list)
	require.NoError(t, err)
	assert.Empty(t, items)
	rv, err := meta.NewAccessor().ResourceVersion(list)
	require.NoError(t, err)
	assert.Equal(t, listResourceVersion, rv, "a watch can start from the list")
	require.Len(t, *warned, 1)
	assert.Contains(t, (*warned)[0], "kubefed get pods")

	for name, opts := range map[string]*metainternalversion.ListOptions{
		"kubectl's prune, by label": {LabelSelector: labels.SelectorFromSet(labels.Set{"app": "web"})},
		"an informer, from 0":       {ResourceVersion: "0"},
	} {
		ctx, warned := withWarnings()
		_, err := pods.List(ctx, opts)
		require.NoError(t, err)
		assert.Empty(t, *warned, name)
	}
}

func TestGetIsNotFound(t *testing.T) {
	ctx, warned := withWarnings()
	_, err := Stores()["persistentvolumes"].(*REST).Get(ctx, "pv1", nil)
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
	assert.Contains(t, err.Error(), `persistentvolumes "pv1" not found`)
	require.Len(t, *warned, 1)
	assert.Contains(t, (*warned)[0], "--context=FED/CLUSTER get persistentvolumes")
}

func TestWatchStaysOpenUntilStopped(t *testing.T) {
	w, err := Stores()["endpoints"].(*REST).Watch(context.Background(), nil)
	require.NoError(t, err)
	select {
	case ev, open := <-w.ResultChan():
		t.Fatalf("the watch sent %v (open %v): an informer would list again at once", ev, open)
	default:
	}
	w.Stop()
	_, open := <-w.ResultChan()
	assert.False(t, open, "stopped")
}

func TestWatchChecksItsResourceVersion(t *testing.T) {
	pods := Stores()["pods"].(*REST)
	for _, rv := range []string{"", "0", listResourceVersion} {
		w, err := pods.Watch(context.Background(), &metainternalversion.ListOptions{ResourceVersion: rv})
		require.NoError(t, err, "from %q", rv)
		w.Stop()
	}
	_, err := pods.Watch(context.Background(), &metainternalversion.ListOptions{ResourceVersion: "abc"})
	assert.True(t, apierrors.IsBadRequest(err), "%v", err)
	_, err = pods.Watch(context.Background(), &metainternalversion.ListOptions{ResourceVersion: "999999999"})
	assert.True(t, storage.IsTooLargeResourceVersion(err), "%v", err)
}
