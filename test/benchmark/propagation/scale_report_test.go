package propagation

import (
	"fmt"
	"io"
	"math"
)

// scaleRow is one figure of the object-count axis at one count.
type scaleRow struct {
	// Objects is how many federated objects were at rest.
	Objects  int     `json:"objects"`
	Clusters int     `json:"clusters"`
	Figure   string  `json:"figure"`
	Value    float64 `json:"value"`
	// Empty is the same figure measured on the same federation before the
	// objects were created; nil when it has none.
	Empty *float64 `json:"empty,omitempty"`
	// Target is the issue's, as "< 2" (Value must be below) or "= 0"; ""
	// when it sets none.
	Target string `json:"target,omitempty"`
	// Met says whether Value meets Target.
	Met *bool `json:"met,omitempty"`
}

// Targets of the object-count axis (issue 22).
const (
	// targetKiBPerCopy bounds the controller manager's RSS per federated
	// object per member.
	targetKiBPerCopy = 2.0
	// targetRestartSeconds bounds a restart to every copy verified, at
	// 50,000 objects.
	targetRestartSeconds = 60.0
)

// none is an empty federation's figure that was not measured.
var none = math.NaN()

// optional is v, or nil when it is NaN (JSON has no NaN).
func optional(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// scaleAdd records a figure with no target.
func (bn *bench) scaleAdd(objects int, figure string, value, empty float64) {
	bn.scaleRecord(scaleRow{Objects: objects, Clusters: len(bn.clusters), Figure: figure, Value: value, Empty: optional(empty)})
}

// scaleBelow records a figure that must be below limit.
func (bn *bench) scaleBelow(objects int, figure string, value, empty, limit float64) {
	met := value < limit
	bn.scaleRecord(scaleRow{Objects: objects, Clusters: len(bn.clusters), Figure: figure, Value: value, Empty: optional(empty),
		Target: "< " + num(limit), Met: &met})
}

// scaleZero records a count that must be zero.
func (bn *bench) scaleZero(objects int, figure string, value float64) {
	met := value == 0
	bn.scaleRecord(scaleRow{Objects: objects, Clusters: len(bn.clusters), Figure: figure, Value: value,
		Target: "= 0", Met: &met})
}

// scaleRecord keeps a figure for the table, and prints it at once: a long
// run cut short still tells what it measured.
func (bn *bench) scaleRecord(r scaleRow) {
	bn.rep.Scale = append(bn.rep.Scale, r)
	if bn.b != nil {
		fmt.Printf("objects=%d: %s: %s\n", r.Objects, r.Figure, scaleNum(r.Value))
	}
}

// scaleNote notes s under the tables, and prints it at once.
func (bn *bench) scaleNote(s string) {
	bn.note(s)
	fmt.Println(s)
}

// kibPerCopy is rssMiB spread over every copy: objects in each of members.
func kibPerCopy(rssMiB float64, objects, members int) float64 {
	if objects <= 0 || members <= 0 {
		return math.NaN()
	}
	return rssMiB * 1024 / float64(objects*members)
}

// printScale writes the object-count axis as Markdown.
func (r *report) printScale(w io.Writer) {
	if len(r.Scale) == 0 {
		return
	}
	fmt.Fprintf(w, "\n| objects | N | figure | value | empty federation | target | met |\n|---|---|---|---|---|---|---|\n")
	for _, x := range r.Scale {
		empty, target, met := "—", "—", "—"
		if x.Empty != nil {
			empty = scaleNum(*x.Empty)
		}
		if x.Target != "" {
			target = x.Target
		}
		if x.Met != nil {
			met = map[bool]string{true: "yes", false: "**no**"}[*x.Met]
		}
		fmt.Fprintf(w, "| %d | %d | %s | %s | %s | %s | %s |\n", x.Objects, x.Clusters, x.Figure, scaleNum(x.Value), empty, target, met)
	}
}

// scaleNum prints small figures (KiB per copy, writes) with two decimals.
func scaleNum(v float64) string {
	if v != 0 && math.Abs(v) < 10 {
		return fmt.Sprintf("%.2f", v)
	}
	return num(v)
}
