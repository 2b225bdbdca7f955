package writer

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer/internal/queues"
)

// Event reasons on federated objects.
const (
	ReasonCreate       = "CreateInCluster"
	ReasonUpdate       = "UpdateInCluster"
	ReasonDelete       = "DeleteInCluster"
	ReasonCreateFailed = "CreateInClusterFailed"
	ReasonUpdateFailed = "UpdateInClusterFailed"
	ReasonDeleteFailed = "DeleteInClusterFailed"
	ReasonAdopt        = "AdoptInCluster"
)

// recordCopies records one event per kind of write of an object, naming
// its clusters: "Created ConfigMap ns/a in clusters c1, c2". One event per
// object rather than per copy keeps the federation apiserver's writes from
// growing with the number of members.
func (w *Writer) recordCopies(obj *unstructured.Unstructured, events []queues.Event) {
	if obj == nil || len(events) == 0 {
		return
	}
	type kind struct{ reason, verb, suffix string }
	clusters := map[kind][]string{}
	for _, e := range events {
		k := kind{e.Reason, e.Verb, e.Suffix}
		if !slices.Contains(clusters[k], e.Cluster) {
			clusters[k] = append(clusters[k], e.Cluster)
		}
	}
	what := fmt.Sprintf("%s %s", w.typ.Kind, fedobject.Key(obj.GetNamespace(), obj.GetName()))
	for _, k := range slices.SortedFunc(maps.Keys(clusters), func(a, b kind) int {
		return strings.Compare(a.reason+a.verb+a.suffix, b.reason+b.verb+b.suffix)
	}) {
		names := clusters[k]
		slices.Sort(names)
		where := "cluster " + names[0]
		if len(names) > 1 {
			where = "clusters " + strings.Join(names, ", ")
		}
		w.recorder.Eventf(obj, corev1.EventTypeNormal, k.reason, "%s %s in %s%s", k.verb, what, where, k.suffix)
	}
}
