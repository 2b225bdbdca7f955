// Package replicapreferences parses the annotations that say how the
// replicas of a federated ReplicaSet, Deployment, StatefulSet or Job are spread over the
// member clusters.
package replicapreferences

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
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

// Bounds of an annotation: numbers fit an int32 as replica counts do (the
// planner's arithmetic stays far from overflow), and the value stays a small
// part of the object's 256 KiB of annotations.
const (
	// MaxValue bounds weight, minReplicas and maxReplicas.
	MaxValue = math.MaxInt32
	// MaxClusters bounds the number of entries.
	MaxClusters = 1000
	// MaxSize bounds the value in bytes.
	MaxSize = 128 * 1024
)

// Parse parses and validates an annotation value. Unknown fields, negative
// numbers or numbers above MaxValue, a maximum under the minimum and
// cluster names that are not DNS-1035 labels (or "*") are errors.
func Parse(value string) (*Preferences, error) {
	p, errs := ParseField(value, nil)
	if len(errs) == 0 {
		return p, nil
	}
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		if e.Field == "<nil>" { // the value as a whole
			msgs = append(msgs, e.ErrorBody())
		} else {
			msgs = append(msgs, e.Error())
		}
	}
	return nil, errors.New(strings.Join(msgs, "; "))
}

// ParseField is Parse of the annotation at path, whose problems are field
// errors that name what is wrong under path, such as
// path.clusters[cluster1].weight.
func ParseField(value string, path *field.Path) (*Preferences, field.ErrorList) {
	if len(value) > MaxSize {
		return nil, field.ErrorList{field.TooLong(path, "" /* not echoed */, MaxSize)}
	}
	var p Preferences
	dec := json.NewDecoder(bytes.NewReader([]byte(value)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, field.ErrorList{field.Invalid(path, value, fmt.Sprintf(
			`not a JSON object {"rebalance":bool,"clusters":{name:{"minReplicas","maxReplicas","weight"}}}: %v`, err))}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, field.ErrorList{field.Invalid(path, value, "unexpected data after the JSON object")}
	}
	if errs := p.validate(path.Child("clusters")); len(errs) > 0 {
		return nil, errs
	}
	return &p, nil
}

// validate checks the clusters' entries, in name order so that the
// message is stable.
func (p *Preferences) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(p.Clusters) > MaxClusters {
		return field.ErrorList{field.TooMany(path, len(p.Clusters), MaxClusters)}
	}
	for _, name := range slices.Sorted(maps.Keys(p.Clusters)) {
		c, at := p.Clusters[name], path.Key(name)
		if name != AllClusters {
			if msgs := validation.IsDNS1035Label(name); len(msgs) > 0 {
				errs = append(errs, field.Invalid(at, name, fmt.Sprintf("not a cluster name or %q: %s", AllClusters, msgs[0])))
			}
		}
		errs = append(errs, bounded(at.Child("minReplicas"), c.MinReplicas)...)
		errs = append(errs, bounded(at.Child("weight"), c.Weight)...)
		if c.MaxReplicas != nil {
			max := at.Child("maxReplicas")
			errs = append(errs, bounded(max, *c.MaxReplicas)...)
			if *c.MaxReplicas < c.MinReplicas {
				errs = append(errs, field.Invalid(max, *c.MaxReplicas, fmt.Sprintf("must not be less than minReplicas (%d)", c.MinReplicas)))
			}
		}
	}
	return errs
}

// bounded checks that a number is within 0..MaxValue.
func bounded(path *field.Path, n int64) field.ErrorList {
	switch {
	case n < 0:
		return field.ErrorList{field.Invalid(path, n, "must not be negative")}
	case n > MaxValue:
		return field.ErrorList{field.Invalid(path, n, fmt.Sprintf("must be at most %d", MaxValue))}
	}
	return nil
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
