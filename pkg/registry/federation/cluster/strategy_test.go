package cluster

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

func cluster(address, region string, ready corev1.ConditionStatus) *federationv1beta1.Cluster {
	c := &federationv1beta1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c1", ResourceVersion: "1", Generation: 1},
		Spec: federationv1beta1.ClusterSpec{ServerAddressByClientCIDRs: []federationv1beta1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: address},
		}},
		Status: federationv1beta1.ClusterStatus{Region: region},
	}
	if ready != "" {
		c.Status.Conditions = []federationv1beta1.ClusterCondition{{Type: federationv1beta1.ClusterReady, Status: ready}}
	}
	return c
}

func TestStrategy(t *testing.T) {
	ctx := context.Background()
	s := NewStrategy(runtime.NewScheme())

	created := cluster("https://a", "r1", corev1.ConditionTrue)
	s.PrepareForCreate(ctx, created)
	assert.Empty(t, created.Status, "create clears status")
	assert.Empty(t, s.Validate(ctx, created))

	old := cluster("https://a", "r1", corev1.ConditionTrue)
	updated := cluster("https://b", "r2", corev1.ConditionFalse)
	s.PrepareForUpdate(ctx, updated, old)
	assert.Equal(t, old.Status, updated.Status, "update keeps status")
	assert.Equal(t, "https://b", updated.Spec.ServerAddressByClientCIDRs[0].ServerAddress)
	assert.Equal(t, int64(2), updated.Generation, "a spec change bumps the generation")

	invalid := cluster("https://a", "", "")
	invalid.Spec.ServerAddressByClientCIDRs[0].ClientCIDR = "bad"
	assert.NotEmpty(t, s.ValidateUpdate(ctx, invalid, old), "update validates the spec")

	status := NewStatusStrategy(s)
	old = cluster("https://a", "r1", corev1.ConditionTrue)
	statusUpdate := cluster("https://changed", "r2", corev1.ConditionFalse)
	status.PrepareForUpdate(ctx, statusUpdate, old)
	assert.Equal(t, old.Spec, statusUpdate.Spec, "a status update keeps the spec")
	assert.Equal(t, "r2", statusUpdate.Status.Region)
	assert.Empty(t, status.ValidateUpdate(ctx, statusUpdate, old))

	hostile := cluster("https://a", "a/b", corev1.ConditionTrue)
	status.PrepareForUpdate(ctx, hostile, old)
	assert.NotEmpty(t, status.ValidateUpdate(ctx, hostile, old), "a status update validates the region")
}

func TestStatus(t *testing.T) {
	offline := cluster("https://a", "", corev1.ConditionFalse)
	offline.Status.Conditions = append(offline.Status.Conditions, federationv1beta1.ClusterCondition{Type: federationv1beta1.ClusterOffline, Status: corev1.ConditionTrue})
	cases := map[string]*federationv1beta1.Cluster{
		"Ready":    cluster("https://a", "", corev1.ConditionTrue),
		"NotReady": cluster("https://a", "", corev1.ConditionFalse),
		"Unknown":  cluster("https://a", "", ""),
		"Offline":  offline,
	}
	for want, c := range cases {
		assert.Equal(t, want, Status(c))
	}
}

func TestTableConvertor(t *testing.T) {
	c := cluster("https://a", "r1", corev1.ConditionTrue)
	c.Status.Zones = []string{"z1", "z2"}
	table, err := TableConvertor{}.ConvertToTable(context.Background(), &federationv1beta1.ClusterList{Items: []federationv1beta1.Cluster{*c}}, nil)
	assert.NoError(t, err)
	var names []string
	for _, col := range table.ColumnDefinitions {
		names = append(names, col.Name)
	}
	assert.Equal(t, []string{"Name", "Status", "Zones", "Region", "Connection", "Age"}, names)
	assert.Equal(t, []interface{}{"c1", "Ready", "z1,z2", "r1", "Direct"}, table.Rows[0].Cells[:5])

	c.Spec.Connection = federationv1beta1.ConnectionAgent
	table, err = TableConvertor{}.ConvertToTable(context.Background(), c, nil)
	assert.NoError(t, err)
	assert.Equal(t, "Agent", table.Rows[0].Cells[4])

	_, err = TableConvertor{}.ConvertToTable(context.Background(), &metav1.Status{}, nil)
	assert.Error(t, err)
}
