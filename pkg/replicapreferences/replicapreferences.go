// Package replicapreferences parses the annotations that say how the
// replicas of a federated ReplicaSet, Deployment or Job are spread over the
// member clusters.
package replicapreferences

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/util/validation"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/planner"
)

// The annotation keys, per kind.
const (
	// ReplicaSetAnnotation holds the preferences of a ReplicaSet.
	ReplicaSetAnnotation = federationv1beta1.ReplicaSetPreferencesAnnotation
	// DeploymentAnnotation holds the preferences of a Deployment.
	DeploymentAnnotation = federationv1beta1.DeploymentPreferencesAnnotation
	// JobAnnotation holds the preferences of a Job (for parallelism and completions).
	JobAnnotation = federationv1beta1.JobPreferencesAnnotation
)

// AllClusters is the cluster name whose preferences apply to every cluster
// without an entry of its own.
const AllClusters = "*"

// Preferences are the replica allocation preferences of one object.
// JSON field names match case-insensitively, so v1's untagged spellings
// (Rebalance, Clusters, MinReplicas, MaxReplicas, Weight) are accepted.
type Preferences struct {
	// Rebalance lets the planner move replicas that already run.
	Rebalance bool `json:"rebalance,omitempty"`
	// Clusters maps a cluster name, or "*", to its preferences.
	Clusters map[string]ClusterPreferences `json:"clusters"`
}

// ClusterPreferences are the preferences for one cluster.
type ClusterPreferences struct {
	// MinReplicas is given to the cluster before weights are applied.
	MinReplicas int64 `json:"minReplicas,omitempty"`
	// MaxReplicas caps the cluster; nil means no cap.
	MaxReplicas *int64 `json:"maxReplicas,omitempty"`
	// Weight is the cluster's share of the remaining replicas.
	Weight int64 `json:"weight,omitempty"`
}

// Default are the preferences of an object without the annotation: spread
// evenly over every cluster.
func Default() *Preferences {
	return &Preferences{Clusters: map[string]ClusterPreferences{AllClusters: {Weight: 1}}}
}

// Parse parses and validates an annotation value. Unknown fields, negative
// numbers, a maximum under the minimum and cluster names that are not
// DNS-1035 labels (or "*") are errors.
func Parse(value string) (*Preferences, error) {
	var p Preferences
	dec := json.NewDecoder(bytes.NewReader([]byte(value)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf(`not a JSON object {"rebalance":bool,"clusters":{name:{"minReplicas","maxReplicas","weight"}}}: %w`, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON object")
	}
	for name, c := range p.Clusters {
		if name != AllClusters {
			if msgs := validation.IsDNS1035Label(name); len(msgs) > 0 {
				return nil, fmt.Errorf("cluster %q: not a cluster name or %q: %s", name, AllClusters, msgs[0])
			}
		}
		switch {
		case c.MinReplicas < 0:
			return nil, fmt.Errorf("cluster %q: minReplicas %d is negative", name, c.MinReplicas)
		case c.Weight < 0:
			return nil, fmt.Errorf("cluster %q: weight %d is negative", name, c.Weight)
		case c.MaxReplicas != nil && *c.MaxReplicas < c.MinReplicas:
			return nil, fmt.Errorf("cluster %q: maxReplicas %d is less than minReplicas %d", name, *c.MaxReplicas, c.MinReplicas)
		}
	}
	return &p, nil
}

// ForCluster returns the preferences that apply to a cluster: its own,
// else those of "*"; ok is false when neither exists (the cluster gets no
// replicas).
func (p *Preferences) ForCluster(name string) (prefs ClusterPreferences, ok bool) {
	if c, ok := p.Clusters[name]; ok {
		return c, true
	}
	c, ok := p.Clusters[AllClusters]
	return c, ok
}

// Planner returns the preferences in the planner's terms.
func (p *Preferences) Planner() planner.Preferences {
	out := planner.Preferences{Rebalance: p.Rebalance, Clusters: make(map[string]planner.ClusterPreference, len(p.Clusters))}
	for name, c := range p.Clusters {
		out.Clusters[name] = planner.ClusterPreference{MinReplicas: c.MinReplicas, MaxReplicas: c.MaxReplicas, Weight: c.Weight}
	}
	return out
}
