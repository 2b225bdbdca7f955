package plan

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// LastWrite is what the writer remembers of a member copy: what our last
// write left there, or the copy as a sync first found it in sync.
type LastWrite struct {
	// Version of the copy then (see Version), and its resourceVersion.
	Version, ResourceVersion string
	// Hash we applied.
	Hash string
	// Unseen: our write, whose watch event has not come yet.
	Unseen bool
	// Passed are the resourceVersions our write went through before its
	// end (a create handed over to our applies): their events come late.
	Passed []string
}

// passedThrough reports whether rv is a version our last write left on
// its way to the end.
func (l LastWrite) passedThrough(rv string) bool {
	return rv != "" && slices.Contains(l.Passed, rv)
}

// Observed is what is known of one cluster's copy when it is judged.
type Observed struct {
	// Placed: the cluster should hold a copy.
	Placed bool
	// Cur is the copy in the member's cache; nil when the cache holds
	// none (absent, not ours, or not seen yet).
	Cur *unstructured.Unstructured
	// Last is what the writer remembers of the copy, when Known.
	Last  LastWrite
	Known bool
	// Desired is what the cluster should hold, and Hash its hash.
	Desired *unstructured.Unstructured
	Hash    string
}

// Verdict is the one judgment of a copy in a reconcile.
type Verdict struct {
	// InSync: the member holds what it should (nothing, when not placed).
	InSync bool
	// NotCached: placed, and the cache holds no copy the judgment could
	// read (and no unseen write of ours explains it): the writer reads
	// the member live, and that read is the copy's judgment.
	NotCached bool
	// Remember: in sync, and the writer knew nothing of it (after a
	// restart): it is remembered as ours from now on.
	Remember bool
}

// Judge tells from the member's cache and the writer's memory whether a
// copy holds what it should. It is the only place "in sync" is decided;
// the writer acts on its verdict, and drops a task whose Basis changed
// before it ran (the next reconcile judges again).
func Judge(o Observed) Verdict {
	if !o.Placed {
		return Verdict{InSync: o.Cur == nil}
	}
	if o.Cur == nil {
		// Our write of this very version, whose watch event has not come
		// yet: the event brings the object back.
		inSync := o.Known && o.Last.Unseen && o.Last.Hash == o.Hash
		return Verdict{InSync: inSync, NotCached: !inSync}
	}
	if o.Known && o.Last.Hash == o.Hash && o.Last.passedThrough(o.Cur.GetResourceVersion()) {
		// Our write of this very version, seen on its way: the watch
		// brings its end next.
		return Verdict{InSync: true}
	}
	if !holdsDesired(o.Cur, o.Desired, o.Hash, o.Last.Version) {
		return Verdict{}
	}
	return Verdict{InSync: true, Remember: !o.Known}
}

// Basis stamps what a verdict was judged on: the version of the cached
// copy and what our last write left. A task whose basis no longer holds
// when it runs (the member changed the copy, or another write of ours
// ended meanwhile) is not carried out on an old judgment.
func Basis(cur *unstructured.Unstructured, last LastWrite, known bool) string {
	stamp := "absent"
	if cur != nil {
		stamp = Version(cur)
	}
	if known {
		stamp += "|" + last.ResourceVersion + "|" + last.Hash
	}
	return stamp
}
