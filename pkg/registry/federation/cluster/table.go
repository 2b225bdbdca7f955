package cluster

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// TableConvertor prints Clusters for `kubectl get`: NAME, STATUS
// (Ready/NotReady/Offline/Unknown), ZONES, REGION, CONNECTION, AGE.
type TableConvertor struct{}

var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Status", Type: "string", Description: "Ready when the member answers its readiness probe, NotReady when it does not, Offline when it cannot be reached."},
	{Name: "Zones", Type: "string", Description: "Zones of the member's nodes."},
	{Name: "Region", Type: "string", Description: "Region of the member's nodes."},
	{Name: "Connection", Type: "string", Description: "How the federation reaches the member: Direct (it dials the member) or Agent (through the tunnel the member's agent holds open)."},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

// ConvertToTable implements rest.TableConvertor.
func (TableConvertor) ConvertToTable(_ context.Context, obj runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{ColumnDefinitions: columns}
	var clusters []federationv1beta1.Cluster
	switch t := obj.(type) {
	case *federationv1beta1.Cluster:
		clusters = []federationv1beta1.Cluster{*t}
	case *federationv1beta1.ClusterList:
		clusters = t.Items
		table.ResourceVersion = t.ResourceVersion
		table.Continue = t.Continue
		table.RemainingItemCount = t.RemainingItemCount
	default:
		return nil, fmt.Errorf("printing %T as a table of clusters: not a Cluster or ClusterList", obj)
	}
	if m, err := meta.ListAccessor(obj); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
	}
	for i := range clusters {
		c := &clusters[i]
		zones := strings.Join(c.Status.Zones, ",")
		if zones == "" {
			zones = "<none>"
		}
		region := c.Status.Region
		if region == "" {
			region = "<none>"
		}
		connection := c.Spec.Connection
		if connection == "" {
			connection = federationv1beta1.ConnectionDirect
		}
		table.Rows = append(table.Rows, metav1.TableRow{
			Cells:  []interface{}{c.Name, Status(c), zones, region, string(connection), age(c.CreationTimestamp)},
			Object: runtime.RawExtension{Object: c},
		})
	}
	return table, nil
}

// Status summarises a Cluster's conditions as v1's `kubectl get clusters`
// did: Offline when the Offline condition is True, else Ready or NotReady
// from the Ready condition, else Unknown.
func Status(c *federationv1beta1.Cluster) string {
	status := "Unknown"
	for _, cond := range c.Status.Conditions {
		switch {
		case cond.Type == federationv1beta1.ClusterOffline && cond.Status == "True":
			return "Offline"
		case cond.Type == federationv1beta1.ClusterReady && cond.Status == "True":
			status = "Ready"
		case cond.Type == federationv1beta1.ClusterReady:
			status = "NotReady"
		}
	}
	return status
}

func age(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(metav1.Now().Sub(t.Time))
}
