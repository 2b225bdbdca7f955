package apiserver

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/kubernetes/pkg/apis/apps"
	api "k8s.io/kubernetes/pkg/apis/core"
	deploymentstore "k8s.io/kubernetes/pkg/registry/apps/deployment/storage"
	configmapstore "k8s.io/kubernetes/pkg/registry/core/configmap/storage"
	"k8s.io/utils/ptr"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/tombstone"
	"github.com/federation-v1/federation/test/etcdtest"
)

// deletionFixture is the ConfigMap and Deployment storage as served, on a
// real etcd, with the ConfigMap storage the tombstones are written through.
type deletionFixture struct {
	configMaps  *configmapstore.REST
	served      rest.StandardStorage
	deployments rest.StandardStorage
	// creater writes the tombstones; failWith makes it fail.
	creater *recordingCreater
	// getter builds other storages on the same etcd.
	getter generic.RESTOptionsGetter
}

// recordingCreater writes tombstones through the real ConfigMap storage,
// noting whether the deleted object was still there at the time.
type recordingCreater struct {
	next     rest.Creater
	before   func(obj runtime.Object)
	failWith error
}

func (r *recordingCreater) Create(ctx context.Context, obj runtime.Object, v rest.ValidateObjectFunc, o *metav1.CreateOptions) (runtime.Object, error) {
	if r.before != nil {
		r.before(obj)
	}
	if r.failWith != nil {
		return nil, r.failWith
	}
	return r.next.Create(ctx, obj, v, o)
}

func (r *recordingCreater) New() runtime.Object { return r.next.New() }

func newDeletionFixture(t *testing.T) *deletionFixture {
	t.Helper()
	srv := etcdtest.Start(t)
	etcd := genericoptions.NewEtcdOptions(storagebackend.NewDefaultConfig("/registry", nil))
	etcd.StorageConfig.Transport.ServerList = []string{srv.Endpoint}
	etcd.EnableWatchCache = false
	factory, err := NewStorageFactory(etcd, NewEffectiveVersion("1.36.3"))
	require.NoError(t, err)
	var getter generic.RESTOptionsGetter = &genericoptions.StorageFactoryRestOptionsFactory{Options: *etcd, StorageFactory: factory}

	configMaps, err := configmapstore.NewREST(getter)
	require.NoError(t, err)
	d, err := deploymentstore.NewStorage(getter)
	require.NoError(t, err)
	t.Cleanup(func() { configMaps.Destroy(); d.Deployment.Destroy() })

	creater := &recordingCreater{next: configMaps}
	w := &tombstoneWriter{configMaps: creater, now: time.Now}
	wrap := func(name string, stores map[string]rest.Storage) rest.StandardStorage {
		out, err := withTombstones(federatedtypes.ByName(name), stores, w)
		require.NoError(t, err)
		return out[name].(rest.StandardStorage)
	}
	return &deletionFixture{
		configMaps:  configMaps,
		served:      wrap("configmaps", map[string]rest.Storage{"configmaps": configMaps}),
		deployments: wrap("deployments", map[string]rest.Storage{"deployments": d.Deployment, "deployments/status": d.Status}),
		creater:     creater,
		getter:      getter,
	}
}

func inNamespace(ns string) context.Context {
	return genericapirequest.WithNamespace(context.Background(), ns)
}

func (f *deletionFixture) createConfigMap(t *testing.T, ns, name string, mutate func(*api.ConfigMap)) *api.ConfigMap {
	t.Helper()
	cm := &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "y"}},
		Data: map[string]string{"password": "s3cr3t-value"}}
	if mutate != nil {
		mutate(cm)
	}
	out, err := f.served.Create(inNamespace(ns), cm, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	require.NoError(t, err)
	return out.(*api.ConfigMap)
}

// tombstones are the tombstones written, by name.
func (f *deletionFixture) tombstones(t *testing.T) map[string]*api.ConfigMap {
	t.Helper()
	list, err := f.configMaps.List(inNamespace(tombstone.Namespace), &metainternalversion.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{}).Add(mustRequirement(t, tombstone.Label)),
	})
	require.NoError(t, err)
	out := map[string]*api.ConfigMap{}
	for i := range list.(*api.ConfigMapList).Items {
		cm := &list.(*api.ConfigMapList).Items[i]
		out[cm.Name] = cm
	}
	return out
}

func mustRequirement(t *testing.T, key string) labels.Requirement {
	r, err := labels.NewRequirement(key, "exists", nil)
	require.NoError(t, err)
	return *r
}

func (f *deletionFixture) getConfigMap(ns, name string) (*api.ConfigMap, error) {
	obj, err := f.configMaps.Get(inNamespace(ns), name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*api.ConfigMap), nil
}

func background() *metav1.DeleteOptions {
	return &metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
}

func TestDeleteWritesTheTombstoneFirstThenTheObjectGoesAtOnce(t *testing.T) {
	f := newDeletionFixture(t)
	cm := f.createConfigMap(t, "ns", "a", func(cm *api.ConfigMap) {
		cm.Annotations = map[string]string{
			federationv1beta1.DeleteAdoptedAnnotation:          "true",
			federationv1beta1.ClusterSelectorAnnotation:        `[{"key":"env","operator":"=","values":["prod"]}]`,
			"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"password":"s3cr3t-value"}}`,
		}
	})
	objectThereAtTombstone := false
	f.creater.before = func(runtime.Object) {
		_, err := f.getConfigMap("ns", "a")
		objectThereAtTombstone = err == nil
	}

	_, deleted, err := f.served.Delete(inNamespace("ns"), "a", rest.ValidateAllObjectFunc, background())
	require.NoError(t, err)
	assert.True(t, deleted, "deleted at once")
	assert.True(t, objectThereAtTombstone, "the tombstone is written before the object is deleted")
	_, err = f.getConfigMap("ns", "a")
	assert.True(t, apierrors.IsNotFound(err), "gone from the next read: %v", err)

	graves := f.tombstones(t)
	require.Len(t, graves, 1)
	grave := graves[tombstone.Name(cm.UID)]
	require.NotNil(t, grave, "named from the object's UID")
	assert.Equal(t, "configmaps", grave.Labels[tombstone.Label])
	r, err := tombstone.Parse(grave.Data)
	require.NoError(t, err)
	assert.Equal(t, "ns/a", r.ObjectKey())
	assert.Equal(t, cm.UID, r.UID)
	assert.WithinDuration(t, time.Now(), r.Deleted, 5*time.Second)
	assert.Equal(t, map[string]string{
		federationv1beta1.DeleteAdoptedAnnotation:   "true",
		federationv1beta1.ClusterSelectorAnnotation: `[{"key":"env","operator":"=","values":["prod"]}]`,
	}, r.Annotations, "only the annotations that decide the deletion")
	for k, v := range grave.Data {
		assert.NotContains(t, v, "s3cr3t-value", "data.%s carries none of the object's data", k)
	}
}

func TestDeleteFailsWithoutItsTombstoneAndNothingIsLost(t *testing.T) {
	f := newDeletionFixture(t)
	f.createConfigMap(t, "ns", "a", nil)
	f.creater.failWith = errors.New("etcd is full")

	_, deleted, err := f.served.Delete(inNamespace("ns"), "a", rest.ValidateAllObjectFunc, background())
	require.Error(t, err)
	assert.False(t, deleted)
	assert.True(t, apierrors.IsInternalError(err), "a 500: %v", err)
	assert.Contains(t, err.Error(), "recording the deletion of configmaps ns/a for its member copies failed, so it was not deleted")
	assert.Contains(t, err.Error(), "etcd is full")
	_, err = f.getConfigMap("ns", "a")
	assert.NoError(t, err, "the object is still there")
}

func TestDeleteCollectionRecordsEachDeletion(t *testing.T) {
	f := newDeletionFixture(t)
	a := f.createConfigMap(t, "ns", "a", nil)
	b := f.createConfigMap(t, "ns", "b", nil)
	f.createConfigMap(t, "ns", "c", func(cm *api.ConfigMap) { cm.Labels["app"] = "z" })
	f.createConfigMap(t, "other", "d", nil)

	selector, err := labels.Parse("app=y")
	require.NoError(t, err)
	out, err := f.served.DeleteCollection(inNamespace("ns"), rest.ValidateAllObjectFunc, background(),
		&metainternalversion.ListOptions{LabelSelector: selector})
	require.NoError(t, err)
	assert.Len(t, out.(*api.ConfigMapList).Items, 2, "the deleted items are returned")

	list, err := f.configMaps.List(inNamespace("ns"), &metainternalversion.ListOptions{})
	require.NoError(t, err)
	var left []string
	for _, cm := range list.(*api.ConfigMapList).Items {
		left = append(left, cm.Name)
	}
	assert.Equal(t, []string{"c"}, left, "the next list has only what the selector left")
	_, err = f.getConfigMap("other", "d")
	assert.NoError(t, err, "another namespace is untouched")
	graves := f.tombstones(t)
	assert.Len(t, graves, 2)
	assert.Contains(t, graves, tombstone.Name(a.UID))
	assert.Contains(t, graves, tombstone.Name(b.UID))
}

func TestOrphanAndForegroundDeletesKeepTheObjectForTheController(t *testing.T) {
	f := newDeletionFixture(t)
	f.createConfigMap(t, "ns", "a", nil)
	_, deleted, err := f.served.Delete(inNamespace("ns"), "a", rest.ValidateAllObjectFunc,
		&metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)})
	require.NoError(t, err)
	assert.False(t, deleted)
	cm, err := f.getConfigMap("ns", "a")
	require.NoError(t, err, "held until the controller manager has orphaned the copies")
	assert.NotNil(t, cm.DeletionTimestamp)
	assert.Equal(t, []string{metav1.FinalizerOrphanDependents}, cm.Finalizers)

	f.createConfigMap(t, "ns", "b", nil)
	_, _, err = f.served.Delete(inNamespace("ns"), "b", rest.ValidateAllObjectFunc,
		&metav1.DeleteOptions{OrphanDependents: ptr.To(true)}) //nolint:staticcheck // the deprecated option is still honoured
	require.NoError(t, err)
	cm, err = f.getConfigMap("ns", "b")
	require.NoError(t, err)
	assert.Equal(t, []string{metav1.FinalizerOrphanDependents}, cm.Finalizers)

	d := &apps.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}, Spec: apps.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: api.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "nginx", TerminationMessagePolicy: api.TerminationMessageReadFile, ImagePullPolicy: api.PullAlways}},
				RestartPolicy: api.RestartPolicyAlways, DNSPolicy: api.DNSClusterFirst, TerminationGracePeriodSeconds: ptr.To[int64](30), SchedulerName: "default-scheduler", SecurityContext: &api.PodSecurityContext{}}},
		Strategy: apps.DeploymentStrategy{Type: apps.RecreateDeploymentStrategyType}}}
	_, err = f.deployments.Create(inNamespace("ns"), d, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	require.NoError(t, err)
	_, deleted, err = f.deployments.Delete(inNamespace("ns"), "web", rest.ValidateAllObjectFunc,
		&metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)})
	require.NoError(t, err)
	assert.False(t, deleted)
	obj, err := f.deployments.Get(inNamespace("ns"), "web", &metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{metav1.FinalizerDeleteDependents}, obj.(*apps.Deployment).Finalizers)

	assert.Empty(t, f.tombstones(t), "no tombstone: the object waits for its copies")
}

func TestAnObjectWithTheOldFinalizerIsDeletedAtOnce(t *testing.T) {
	f := newDeletionFixture(t)
	old := federationv1beta1.FinalizerDeleteFromUnderlyingClusters
	f.createConfigMap(t, "ns", "a", func(cm *api.ConfigMap) { cm.Finalizers = []string{old} })
	f.createConfigMap(t, "ns", "b", func(cm *api.ConfigMap) { cm.Finalizers = []string{old, "example.com/keep"} })
	f.createConfigMap(t, "ns", "c", func(cm *api.ConfigMap) { cm.Finalizers = []string{old} })
	// c was deleted before tombstones: it waits for the old finalizer.
	_, _, err := f.configMaps.Delete(inNamespace("ns"), "c", rest.ValidateAllObjectFunc, background())
	require.NoError(t, err)

	for _, name := range []string{"a", "c"} {
		_, _, err := f.served.Delete(inNamespace("ns"), name, rest.ValidateAllObjectFunc, background())
		require.NoError(t, err, name)
		_, err = f.getConfigMap("ns", name)
		assert.True(t, apierrors.IsNotFound(err), "%s is gone: %v", name, err)
	}
	_, _, err = f.served.Delete(inNamespace("ns"), "b", rest.ValidateAllObjectFunc, background())
	require.NoError(t, err)
	b, err := f.getConfigMap("ns", "b")
	require.NoError(t, err, "another's finalizer still holds b")
	assert.Equal(t, []string{"example.com/keep"}, b.Finalizers, "ours is off")
	assert.Len(t, f.tombstones(t), 3)
}

func TestDeletesThatNeedNoTombstone(t *testing.T) {
	f := newDeletionFixture(t)
	f.createConfigMap(t, federationv1beta1.SystemNamespace, "own", nil)
	_, deleted, err := f.served.Delete(inNamespace(federationv1beta1.SystemNamespace), "own", rest.ValidateAllObjectFunc, background())
	require.NoError(t, err)
	assert.True(t, deleted, "the federation's own namespace is never propagated")

	f.createConfigMap(t, "ns", "a", nil)
	_, deleted, err = f.served.Delete(inNamespace("ns"), "a", rest.ValidateAllObjectFunc,
		&metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	require.NoError(t, err)
	assert.True(t, deleted)
	_, err = f.getConfigMap("ns", "a")
	assert.NoError(t, err, "a dry run deletes nothing")

	_, _, err = f.served.Delete(inNamespace("ns"), "a", rest.ValidateAllObjectFunc,
		&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("not-its-uid"))}})
	require.Error(t, err)
	assert.True(t, apierrors.IsConflict(err), "a failed precondition is a conflict: %v", err)
	_, err = f.getConfigMap("ns", "a")
	assert.NoError(t, err)

	refused := errors.New("refused by admission")
	_, _, err = f.served.Delete(inNamespace("ns"), "a", func(context.Context, runtime.Object) error { return refused }, background())
	assert.ErrorIs(t, err, refused)

	assert.Empty(t, f.tombstones(t))
}

func TestWrappedStoragesKeepTheirNames(t *testing.T) {
	f := newDeletionFixture(t)
	assert.Equal(t, []string{"deploy"}, f.deployments.(rest.ShortNamesProvider).ShortNames())
	assert.Equal(t, []string{"all"}, f.deployments.(rest.CategoriesProvider).Categories())
	assert.Equal(t, []string{"cm"}, f.served.(rest.ShortNamesProvider).ShortNames())

	d := f.deployments.(*tombstoning)
	legacyStores, err := withTombstones(federatedtypes.ByName("deployments"),
		storesFor(extensions, map[string]rest.Storage{"deployments": &deploymentstore.REST{Store: d.Store}}), d.writer)
	require.NoError(t, err)
	assert.Empty(t, legacyStores["deployments"].(rest.ShortNamesProvider).ShortNames(), "extensions/v1beta1 has none, as before")
	assert.True(t, strings.HasPrefix(d.resource.String(), "deployments.apps"))
}
