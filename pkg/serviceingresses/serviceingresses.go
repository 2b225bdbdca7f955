// Package serviceingresses is the federation.kubernetes.io/service-ingresses
// annotation that the federation writes on a federated Service: per member
// cluster whose copy has a load balancer, its ingress addresses, or null
// where the copy has no ready endpoints. Status aggregation writes it; the
// service DNS controller reads it; admission lets no one else write it.
package serviceingresses

import (
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// Subresource is the virtual subresource of services that a user must be
// allowed to update to set or change the annotation: DNS records are made
// from it, so only the federation controller manager may write it.
const Subresource = "federation-ingresses"

// ClusterIngress is one cluster's entry.
type ClusterIngress struct {
	Cluster string `json:"cluster"`
	// Items are the load-balancer ingress of the cluster's copy; nil when it
	// has no ready endpoints.
	Items []corev1.LoadBalancerIngress `json:"items"`
}

// Ingresses is the annotation's value.
type Ingresses struct {
	Items []ClusterIngress `json:"items"`
}

// Parse reads an annotation value; "" is no entry.
func Parse(value string) (Ingresses, error) {
	var in Ingresses
	if value == "" {
		return in, nil
	}
	if err := json.Unmarshal([]byte(value), &in); err != nil {
		return in, fmt.Errorf("annotation %s: %w", federationv1beta1.ServiceIngressesAnnotation, err)
	}
	return in, nil
}

// String writes the value, entries sorted by cluster as v1 did.
func (in Ingresses) String() string {
	sort.Slice(in.Items, func(i, j int) bool { return in.Items[i].Cluster < in.Items[j].Cluster })
	b, _ := json.Marshal(in) // plain strings and slices always marshal
	return string(b)
}
