package propagation

import (
	"fmt"
	"io"
)

// memberRow is one figure of the member-count axis at one count.
type memberRow struct {
	Members int     `json:"members"`
	Figure  string  `json:"figure"`
	Value   float64 `json:"value"`
	// Target is the issue's, as "< 5", "≥ 0.8" or "= 0"; "" when it sets
	// none. Met says whether Value meets it.
	Target string `json:"target,omitempty"`
	Met    *bool  `json:"met,omitempty"`
}

// membersAdd records a figure with no target.
func (bn *bench) membersAdd(members int, figure string, value float64) {
	bn.membersRecord(memberRow{Members: members, Figure: figure, Value: value})
}

// membersBelow records a figure that must be below limit.
func (bn *bench) membersBelow(members int, figure string, value, limit float64) {
	met := value < limit
	bn.membersRecord(memberRow{Members: members, Figure: figure, Value: value, Target: "< " + scaleNum(limit), Met: &met})
}

// membersZero records a count that must be zero.
func (bn *bench) membersZero(members int, figure string, value float64) {
	met := value == 0
	bn.membersRecord(memberRow{Members: members, Figure: figure, Value: value, Target: "= 0", Met: &met})
}

// membersRecord keeps a figure for the table and prints it at once: a long
// run cut short still tells what it measured.
func (bn *bench) membersRecord(r memberRow) {
	bn.rep.Members = append(bn.rep.Members, r)
	if bn.b != nil {
		fmt.Printf("members=%d: %s: %s\n", r.Members, r.Figure, scaleNum(r.Value))
	}
}

// printMembers writes the member-count axis as Markdown.
func (r *report) printMembers(w io.Writer) {
	if len(r.Members) == 0 {
		return
	}
	fmt.Fprintf(w, "\n| members | figure | value | target | met |\n|---|---|---|---|---|\n")
	for _, x := range r.Members {
		target, met := "—", "—"
		if x.Target != "" {
			target = x.Target
		}
		if x.Met != nil {
			met = map[bool]string{true: "yes", false: "**no**"}[*x.Met]
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s |\n", x.Members, x.Figure, scaleNum(x.Value), target, met)
	}
}
