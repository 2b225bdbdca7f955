package servicedns

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/dnsprovider"
	dnsfake "github.com/federation-v1/federation/pkg/dnsprovider/fake"
	"github.com/federation-v1/federation/pkg/dnsrecords"
	fedfake "github.com/federation-v1/federation/pkg/generated/clientset/versioned/fake"
	fedinformerfactory "github.com/federation-v1/federation/pkg/generated/informers/externalversions"
	"github.com/federation-v1/federation/pkg/poll"
)

func cluster(name, region, zone string, isReady bool) *federationv1beta1.Cluster {
	status := corev1.ConditionTrue
	if !isReady {
		status = corev1.ConditionFalse
	}
	return &federationv1beta1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: federationv1beta1.ClusterStatus{
			Conditions: []federationv1beta1.ClusterCondition{{Type: federationv1beta1.ClusterReady, Status: status}},
			Zones:      []string{zone}, Region: region,
		},
	}
}

func service(ingresses string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nginx",
			Annotations: map[string]string{federationv1beta1.ServiceIngressesAnnotation: ingresses}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
	}
}

const allThree = `{"items":[{"cluster":"c1","items":[{"ip":"127.1.1.1"}]},{"cluster":"c2","items":[{"ip":"127.1.2.1"}]},{"cluster":"c3","items":[{"ip":"127.1.3.1"}]}]}`

type fixture struct {
	c        *Controller
	zone     *dnsfake.Zone
	recorder *record.FakeRecorder
	services kubeinformers.SharedInformerFactory
	clusters cache.Indexer
}

func newFixture(t *testing.T, clusters []*federationv1beta1.Cluster, services ...*corev1.Service) *fixture {
	return newFixtureWith(t, Options{}, clusters, services...)
}

// newFixtureWith is newFixture with options (the records' are set).
func newFixtureWith(t *testing.T, opts Options, clusters []*federationv1beta1.Cluster, services ...*corev1.Service) *fixture {
	kube := kubeinformers.NewSharedInformerFactory(kubefake.NewClientset(), 0)
	fed := fedinformerfactory.NewSharedInformerFactory(fedfake.NewSimpleClientset(), 0)
	for _, c := range clusters {
		require.NoError(t, fed.Federation().V1beta1().Clusters().Informer().GetIndexer().Add(c))
	}
	for _, s := range services {
		require.NoError(t, kube.Core().V1().Services().Informer().GetIndexer().Add(s))
	}
	provider := dnsfake.New("example.com.")
	zone, err := provider.Zone(context.Background(), "example.com.")
	require.NoError(t, err)
	recorder := record.NewFakeRecorder(10)
	opts.Records = dnsrecords.Config{Federation: "fed", Domain: "example.com."}
	c, err := New(zone, kube.Core().V1().Services(), fed.Federation().V1beta1().Clusters(), recorder, opts)
	require.NoError(t, err)
	return &fixture{c: c, zone: zone.(*dnsfake.Zone), recorder: recorder, services: kube,
		clusters: fed.Federation().V1beta1().Clusters().Informer().GetIndexer()}
}

// records returns the zone's record sets by name as "TYPE data,data".
func (f *fixture) records(t *testing.T) map[string]string {
	sets, err := f.zone.List(context.Background())
	require.NoError(t, err)
	out := map[string]string{}
	for _, rs := range sets {
		data := slices.Clone(rs.Rrdatas)
		slices.Sort(data)
		out[rs.Name] = string(rs.Type) + " " + strings.Join(data, ",")
	}
	return out
}

var threeClusters = []*federationv1beta1.Cluster{
	cluster("c1", "us-east1", "us-east1-b", true),
	cluster("c2", "us-east1", "us-east1-c", true),
	cluster("c3", "europe-west1", "europe-west1-b", true),
}

func TestRecordsOfAHealthyService(t *testing.T) {
	f := newFixture(t, threeClusters, service(allThree))
	require.NoError(t, f.c.sync(context.Background(), "default/nginx"))
	assert.Equal(t, map[string]string{
		"nginx.default.fed.svc.example.com.":                             "A 127.1.1.1,127.1.2.1,127.1.3.1",
		"nginx.default.fed.svc.us-east1.example.com.":                    "A 127.1.1.1,127.1.2.1",
		"nginx.default.fed.svc.europe-west1.example.com.":                "A 127.1.3.1",
		"nginx.default.fed.svc.us-east1-b.us-east1.example.com.":         "A 127.1.1.1",
		"nginx.default.fed.svc.us-east1-c.us-east1.example.com.":         "A 127.1.2.1",
		"nginx.default.fed.svc.europe-west1-b.europe-west1.example.com.": "A 127.1.3.1",
	}, f.records(t))
	assert.Contains(t, <-f.recorder.Events, ReasonRecordsUpdated)

	// A second pass at rest changes nothing.
	before := len(f.zone.Applied())
	require.NoError(t, f.c.sync(context.Background(), "default/nginx"))
	assert.Len(t, f.zone.Applied(), before, "no changeset at rest")
}

func TestUnhealthyClustersFallBackByCNAME(t *testing.T) {
	clusters := []*federationv1beta1.Cluster{
		cluster("c1", "us-east1", "us-east1-b", true),
		cluster("c2", "us-east1", "us-east1-c", true),
		cluster("c3", "europe-west1", "europe-west1-b", false), // NotReady
	}
	// c2's copy has a load balancer but no ready endpoints.
	ingresses := `{"items":[{"cluster":"c1","items":[{"ip":"127.1.1.1"}]},{"cluster":"c2","items":null},{"cluster":"c3","items":[{"ip":"127.1.3.1"}]}]}`
	f := newFixture(t, clusters, service(ingresses))
	require.NoError(t, f.c.sync(context.Background(), "default/nginx"))
	got := f.records(t)
	assert.Equal(t, "A 127.1.1.1", got["nginx.default.fed.svc.example.com."])
	assert.Equal(t, "CNAME nginx.default.fed.svc.us-east1.example.com.", got["nginx.default.fed.svc.us-east1-c.us-east1.example.com."])
	assert.Equal(t, "CNAME nginx.default.fed.svc.example.com.", got["nginx.default.fed.svc.europe-west1.example.com."])
	assert.Equal(t, "CNAME nginx.default.fed.svc.europe-west1.example.com.", got["nginx.default.fed.svc.europe-west1-b.europe-west1.example.com."])
}

// The propagation controller leaves a cluster that is no longer Ready out of the
// annotation: its zone must still fall back by CNAME, not disappear.
func TestAClusterMissingFromTheAnnotationFallsBackByCNAME(t *testing.T) {
	clusters := []*federationv1beta1.Cluster{
		cluster("c1", "us-east1", "us-east1-b", false), // Offline, so not listed
		cluster("c2", "us-east1", "us-east1-c", true),
		cluster("c3", "europe-west1", "europe-west1-b", true),
	}
	ingresses := `{"items":[{"cluster":"c2","items":[{"ip":"127.1.2.1"}]},{"cluster":"c3","items":[{"ip":"127.1.3.1"}]}]}`
	f := newFixture(t, clusters, service(ingresses))
	require.NoError(t, f.c.sync(context.Background(), "default/nginx"))
	got := f.records(t)
	assert.Equal(t, "A 127.1.2.1,127.1.3.1", got["nginx.default.fed.svc.example.com."])
	assert.Equal(t, "A 127.1.2.1", got["nginx.default.fed.svc.us-east1.example.com."])
	assert.Equal(t, "CNAME nginx.default.fed.svc.us-east1.example.com.", got["nginx.default.fed.svc.us-east1-b.us-east1.example.com."])
}

func TestDeletedServiceLosesItsRecords(t *testing.T) {
	f := newFixture(t, threeClusters, service(allThree))
	require.NoError(t, f.c.sync(context.Background(), "default/nginx"))
	require.NotEmpty(t, f.records(t))
	require.NoError(t, f.services.Core().V1().Services().Informer().GetIndexer().Delete(service(allThree)))
	require.NoError(t, f.c.sync(context.Background(), "default/nginx"))
	assert.Empty(t, f.records(t))
}

func TestAServiceBeingDeletedLosesItsRecords(t *testing.T) {
	svc := service(allThree)
	f := newFixture(t, threeClusters, svc)
	require.NoError(t, f.c.sync(context.Background(), "default/nginx"))
	require.NotEmpty(t, f.records(t))
	deleting := svc.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	require.NoError(t, f.services.Core().V1().Services().Informer().GetIndexer().Update(deleting))
	require.NoError(t, f.c.sync(context.Background(), "default/nginx"))
	assert.Empty(t, f.records(t), "the finalizer may hold the Service, not its names")
}

func TestABadAnnotationIsAnEventNotARetry(t *testing.T) {
	f := newFixture(t, threeClusters, service(`{"items":`))
	require.NoError(t, f.c.sync(context.Background(), "default/nginx"))
	assert.Contains(t, <-f.recorder.Events, ReasonRecordsFailed)
	assert.Empty(t, f.records(t))
}

var _ dnsprovider.Zone = (*dnsfake.Zone)(nil)

func serviceIn(namespace, ingresses string) *corev1.Service {
	s := service(ingresses)
	s.Namespace = namespace
	return s
}

// No member holds a Service of a never-propagated namespace, so its
// annotation was written by hand: it makes no name, and names it made
// before (while its namespace was propagated) go.
func TestAServiceOfANeverPropagatedNamespaceGetsNoRecords(t *testing.T) {
	for _, ns := range []string{federationv1beta1.SystemNamespace, "kube-system", "kube-public", "kube-node-lease"} {
		t.Run(ns, func(t *testing.T) {
			f := newFixture(t, threeClusters, serviceIn(ns, allThree))
			require.NoError(t, f.c.sync(context.Background(), ns+"/nginx"))
			assert.Empty(t, f.records(t))
		})
	}

	f := newFixtureWith(t, Options{NeverPropagatedNamespaces: []string{}}, threeClusters,
		serviceIn("kube-system", allThree), serviceIn(federationv1beta1.SystemNamespace, allThree))
	require.NoError(t, f.c.sync(context.Background(), federationv1beta1.SystemNamespace+"/nginx"))
	assert.Empty(t, f.records(t), "the federation's own namespace is always left out")
	require.NoError(t, f.c.sync(context.Background(), "kube-system/nginx"))
	assert.Equal(t, "A 127.1.1.1,127.1.2.1,127.1.3.1", f.records(t)["nginx.kube-system.fed.svc.example.com."], "the list was narrowed")

	f.c.never = newFixture(t, nil).c.never
	require.NoError(t, f.c.sync(context.Background(), "kube-system/nginx"))
	assert.Empty(t, f.records(t), "and widened again")
}

// A local Service has no copies: no names, and names it had before go.
func TestALocalServiceGetsNoRecords(t *testing.T) {
	svc := service(allThree)
	f := newFixture(t, threeClusters, svc)
	require.NoError(t, f.c.sync(context.Background(), "default/nginx"))
	require.NotEmpty(t, f.records(t))

	local := svc.DeepCopy()
	local.Labels = map[string]string{federationv1beta1.LocalLabel: "true"}
	require.NoError(t, f.services.Core().V1().Services().Informer().GetIndexer().Update(local))
	require.NoError(t, f.c.sync(context.Background(), "default/nginx"))
	assert.Empty(t, f.records(t))
}

// A Cluster that leaves takes its addresses, zones and region along: its
// deletion brings every LoadBalancer Service back, and once the last
// cluster is gone the Service has no name left.
func TestAClusterThatLeavesTakesItsRecords(t *testing.T) {
	ctx := context.Background()
	kubeClient := kubefake.NewClientset(service(allThree))
	var clusters []runtime.Object
	for _, c := range threeClusters {
		clusters = append(clusters, c.DeepCopy())
	}
	fedClient := fedfake.NewSimpleClientset(clusters...)
	kube := kubeinformers.NewSharedInformerFactory(kubeClient, 0)
	fed := fedinformerfactory.NewSharedInformerFactory(fedClient, 0)
	provider := dnsfake.New("example.com.")
	zone, err := provider.Zone(ctx, "example.com.")
	require.NoError(t, err)
	c, err := New(zone, kube.Core().V1().Services(), fed.Federation().V1beta1().Clusters(), record.NewFakeRecorder(10),
		Options{Records: dnsrecords.Config{Federation: "fed", Domain: "example.com."}})
	require.NoError(t, err)
	stop := make(chan struct{})
	defer close(stop)
	kube.Start(stop)
	fed.Start(stop)
	kube.WaitForCacheSync(stop)
	fed.WaitForCacheSync(stop)
	f := &fixture{c: c, zone: zone.(*dnsfake.Zone)}

	// next waits for the Service's key in the queue and syncs it.
	next := func() {
		t.Helper()
		require.NoError(t, poll.Until(ctx, 10*time.Second, "the Service in the queue", func(context.Context) error {
			if c.queue.Len() == 0 {
				return fmt.Errorf("queue empty")
			}
			return nil
		}))
		for c.queue.Len() > 0 {
			key, _ := c.queue.Get()
			require.Equal(t, "default/nginx", key)
			require.NoError(t, c.sync(ctx, key))
			c.queue.Done(key)
		}
	}
	next()
	require.Contains(t, f.records(t), "nginx.default.fed.svc.europe-west1.example.com.")

	require.NoError(t, fedClient.FederationV1beta1().Clusters().Delete(ctx, "c3", metav1.DeleteOptions{}))
	next()
	got := f.records(t)
	assert.Equal(t, "A 127.1.1.1,127.1.2.1", got["nginx.default.fed.svc.example.com."], "the annotation still lists c3")
	for name := range got {
		assert.NotContains(t, name, "europe-west1", "c3's zone and region go")
	}

	require.NoError(t, fedClient.FederationV1beta1().Clusters().Delete(ctx, "c1", metav1.DeleteOptions{}))
	require.NoError(t, fedClient.FederationV1beta1().Clusters().Delete(ctx, "c2", metav1.DeleteOptions{}))
	next()
	assert.Empty(t, f.records(t), "no cluster left, no name left")
}

// A Cluster being deleted counts as gone already.
func TestAClusterBeingDeletedCountsNoMore(t *testing.T) {
	f := newFixture(t, threeClusters, service(allThree))
	deleting := threeClusters[2].DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	f.c.clusterChanged(threeClusters[2], deleting)
	assert.Equal(t, 1, f.c.queue.Len(), "every LoadBalancer Service is synced again")

	require.NoError(t, f.clusters.Update(deleting))
	require.NoError(t, f.c.sync(context.Background(), "default/nginx"))
	got := f.records(t)
	assert.Equal(t, "A 127.1.1.1,127.1.2.1", got["nginx.default.fed.svc.example.com."])
	assert.NotContains(t, got, "nginx.default.fed.svc.europe-west1.example.com.")
}
