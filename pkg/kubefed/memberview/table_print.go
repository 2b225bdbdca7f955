package memberview

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// memberTable is the Table one member answered.
type memberTable struct {
	cluster string
	table   *metav1.Table
	// namespaced says whether the member's resource is namespaced.
	namespaced bool
}

// printOptions say how kubefed get prints.
type printOptions struct {
	// wide prints the columns of priority above 0 too (-o wide).
	wide bool
	// namespace adds a NAMESPACE column (all namespaces).
	namespace bool
}

// printTables prints the members' rows as one table with a CLUSTER column
// first (and NAMESPACE with all namespaces), the columns as the members'
// Tables define them. Members whose columns differ (another Kubernetes
// version, another version of a CRD) get a table of their own, after a
// blank line. It returns the number of rows printed.
func printTables(out io.Writer, tables []memberTable, opts printOptions) int {
	type group struct {
		header []string
		rows   [][]string
	}
	var groups []*group
	bySignature := map[string]*group{}
	rows := 0
	for _, mt := range tables {
		if len(mt.table.Rows) == 0 {
			continue
		}
		shown, header := shownColumns(mt.table.ColumnDefinitions, opts)
		signature := strings.Join(header, "\x00")
		g, ok := bySignature[signature]
		if !ok {
			g = &group{header: header}
			bySignature[signature] = g
			groups = append(groups, g)
		}
		for _, row := range mt.table.Rows {
			line := []string{mt.cluster}
			if opts.namespace {
				line = append(line, formatCell(rowNamespace(row)))
			}
			for _, i := range shown {
				var cell any
				if i < len(row.Cells) {
					cell = row.Cells[i]
				}
				line = append(line, formatCell(cell))
			}
			g.rows = append(g.rows, line)
			rows++
		}
	}
	for i, g := range groups {
		if i > 0 {
			fmt.Fprintln(out)
		}
		w := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
		fmt.Fprintln(w, strings.Join(g.header, "\t"))
		for _, r := range g.rows {
			fmt.Fprintln(w, strings.Join(r, "\t"))
		}
		w.Flush()
	}
	return rows
}

// shownColumns returns the indexes of the columns printed and the header.
func shownColumns(columns []metav1.TableColumnDefinition, opts printOptions) ([]int, []string) {
	header := []string{"CLUSTER"}
	if opts.namespace {
		header = append(header, "NAMESPACE")
	}
	var shown []int
	for i, c := range columns {
		if c.Priority != 0 && !opts.wide {
			continue
		}
		shown = append(shown, i)
		header = append(header, formatCell(strings.ToUpper(c.Name)))
	}
	return shown, header
}

// rowNamespace reads the namespace of a row's object (its metadata, which
// listTable asks for).
func rowNamespace(row metav1.TableRow) string {
	if m, ok := row.Object.Object.(metav1.Object); ok {
		return m.GetNamespace()
	}
	var obj struct {
		Metadata struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if len(row.Object.Raw) == 0 || json.Unmarshal(row.Object.Raw, &obj) != nil {
		return ""
	}
	return obj.Metadata.Namespace
}

// formatCell prints a cell as kubectl does: a string up to its first line
// break (then "..."), anything else with fmt, nothing for null. A member's
// control characters are escaped rather than sent to the terminal.
func formatCell(cell any) string {
	var s string
	switch v := cell.(type) {
	case nil:
		return ""
	case string:
		s = v
		if i := strings.IndexAny(s, "\f\n\r"); i >= 0 {
			s = s[:i] + "..."
		}
	default:
		s = fmt.Sprint(v)
	}
	return escapeControl(s)
}

// escapeControl escapes the control characters of s, which a member
// chose: sent raw, they would drive the user's terminal.
func escapeControl(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
