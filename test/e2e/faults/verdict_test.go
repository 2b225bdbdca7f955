package faults_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// maxExamples bounds the problems a verdict names.
const maxExamples = 8

// verdict is what one pass of the verifier found.
type verdict struct {
	// Lost counts the federated objects (or acknowledged writes) without
	// their copy, or with a stale one, in some selected member, and the
	// acknowledged writes the federation does not hold.
	Lost int
	// Duplicated counts member copies without a live federated object,
	// objects deleted at the federation that came back, and Deployments
	// whose members run more replicas than the federated count.
	Duplicated int
	// Stuck counts federated objects left with a deletionTimestamp and
	// tombstones still pending.
	Stuck int
	// Examples name the first problems found.
	Examples []string
}

func (v verdict) ok() bool { return v.Lost == 0 && v.Duplicated == 0 && v.Stuck == 0 }

func (v verdict) String() string {
	s := fmt.Sprintf("lost %d, duplicated %d, stuck %d", v.Lost, v.Duplicated, v.Stuck)
	if len(v.Examples) > 0 {
		s += ": " + strings.Join(v.Examples, "; ")
	}
	return s
}

func (v *verdict) example(format string, args ...any) {
	if len(v.Examples) < maxExamples {
		v.Examples = append(v.Examples, fmt.Sprintf(format, args...))
	}
}

// compare judges one namespace: want is what the writer had acknowledged,
// fed what the federation holds, members the labelled copies of each
// selected cluster. Names of objects the writer never wrote (made at the
// federation by others) are checked for copies but not against want.
func compare(want, fed state, members map[string]state) verdict {
	var v verdict
	lost := map[string]bool{}
	markLost := func(key, format string, args ...any) {
		if !lost[key] {
			lost[key] = true
			v.example(format, args...)
		}
	}
	for _, name := range sortedKeys(want.ConfigMaps) {
		if got, ok := fed.ConfigMaps[name]; !ok || !maps.Equal(got, want.ConfigMaps[name]) {
			markLost("cm/"+name, "configmap %s: acknowledged gen %s, the federation holds %v", name, want.ConfigMaps[name]["gen"], got)
		}
	}
	for _, name := range sortedKeys(want.Deployments) {
		if got, ok := fed.Deployments[name]; !ok || got != want.Deployments[name] {
			markLost("deploy/"+name, "deployment %s: acknowledged %+v, the federation holds %+v", name, want.Deployments[name], got)
		}
	}
	for _, name := range sortedKeys(fed.ConfigMaps) {
		if _, ok := want.ConfigMaps[name]; !ok && strings.HasPrefix(name, "cm-") {
			v.Duplicated++
			v.example("configmap %s was deleted but the federation holds it", name)
		}
	}
	for _, name := range sortedKeys(fed.Deployments) {
		if _, ok := want.Deployments[name]; !ok && strings.HasPrefix(name, "web-") {
			v.Duplicated++
			v.example("deployment %s was deleted but the federation holds it", name)
		}
	}

	clusters := sortedKeys(members)
	for _, name := range sortedKeys(fed.ConfigMaps) {
		for _, c := range clusters {
			got, ok := members[c].ConfigMaps[name]
			switch {
			case !ok:
				markLost("cm/"+name, "configmap %s: no copy in %s", name, c)
			case !maps.Equal(got, fed.ConfigMaps[name]):
				markLost("cm/"+name, "configmap %s: the copy in %s holds gen %s, the federation gen %s", name, c, got["gen"], fed.ConfigMaps[name]["gen"])
			}
		}
	}
	for _, name := range sortedKeys(fed.Deployments) {
		d := fed.Deployments[name]
		sum := int32(0)
		for _, c := range clusters {
			got, ok := members[c].Deployments[name]
			switch {
			case !ok:
				markLost("deploy/"+name, "deployment %s: no copy in %s", name, c)
			case got.Template != d.Template:
				markLost("deploy/"+name, "deployment %s: the copy in %s has template %s, the federation %s", name, c, got.Template, d.Template)
			}
			sum += got.Replicas
		}
		switch {
		case sum < d.Replicas:
			markLost("deploy/"+name, "deployment %s: the members run %d replicas of %d", name, sum, d.Replicas)
		case sum > d.Replicas:
			v.Duplicated++
			v.example("deployment %s: the members run %d replicas of %d", name, sum, d.Replicas)
		}
	}
	for _, c := range clusters {
		for _, name := range sortedKeys(members[c].ConfigMaps) {
			if _, ok := fed.ConfigMaps[name]; !ok {
				v.Duplicated++
				v.example("configmap %s: a copy in %s without a federated object", name, c)
			}
		}
		for _, name := range sortedKeys(members[c].Deployments) {
			if _, ok := fed.Deployments[name]; !ok {
				v.Duplicated++
				v.example("deployment %s: a copy in %s without a federated object", name, c)
			}
		}
	}
	v.Lost = len(lost)
	return v
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
