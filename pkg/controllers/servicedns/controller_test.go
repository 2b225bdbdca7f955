package servicedns

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/dnsprovider"
	dnsfake "github.com/federation-v1/federation/pkg/dnsprovider/fake"
	"github.com/federation-v1/federation/pkg/dnsrecords"
	fedfake "github.com/federation-v1/federation/pkg/generated/clientset/versioned/fake"
	fedinformerfactory "github.com/federation-v1/federation/pkg/generated/informers/externalversions"
	"github.com/federation-v1/federation/pkg/serviceingresses"
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
			Annotations: map[string]string{serviceingresses.Annotation: ingresses}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
	}
}

const allThree = `{"items":[{"cluster":"c1","items":[{"ip":"127.1.1.1"}]},{"cluster":"c2","items":[{"ip":"127.1.2.1"}]},{"cluster":"c3","items":[{"ip":"127.1.3.1"}]}]}`

type fixture struct {
	c        *Controller
	zone     *dnsfake.Zone
	recorder *record.FakeRecorder
	services kubeinformers.SharedInformerFactory
}

func newFixture(t *testing.T, clusters []*federationv1beta1.Cluster, services ...*corev1.Service) *fixture {
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
	c, err := New(zone, kube.Core().V1().Services(), fed.Federation().V1beta1().Clusters(), recorder,
		Options{Records: dnsrecords.Config{Federation: "fed", Domain: "example.com."}})
	require.NoError(t, err)
	return &fixture{c: c, zone: zone.(*dnsfake.Zone), recorder: recorder, services: kube}
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
