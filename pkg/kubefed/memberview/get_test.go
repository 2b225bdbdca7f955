package memberview

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// tableLines splits each line of a table in its cells.
func tableLines(out string) [][]string {
	var lines [][]string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		lines = append(lines, strings.Fields(l))
	}
	return lines
}

func TestGetCommand(t *testing.T) {
	ctx := context.Background()
	other := testPod("team-b", "api-1", "10.0.1.9", "app")
	other.Labels = map[string]string{"app": "api"}
	fed := newFakeFederation(t, map[string]*fakeMember{
		"cluster1": {pods: []corev1.Pod{testPod("team-a", "web-1", "10.0.1.1", "app"), other}},
		"cluster2": {pods: []corev1.Pod{testPod("team-a", "web-2", "10.0.2.1", "app")}},
		"cluster3": {forbidden: true},
	})
	kubeconfig := writeKubeconfig(t, fed)
	get := func(args ...string) (string, string, error) {
		return runCommand(ctx, append([]string{"get", "--kubeconfig=" + kubeconfig, "--context=fed"}, args...)...)
	}

	// The context's namespace, every member; the refused one on stderr.
	out, errOut, err := get("pods")
	require.NoError(t, err)
	assert.Equal(t, [][]string{
		{"CLUSTER", "NAME", "READY", "STATUS", "RESTARTS", "AGE"},
		{"cluster1", "web-1", "1/1", "Running", "0", "5m"},
		{"cluster2", "web-2", "1/1", "Running", "0", "5m"},
	}, tableLines(out))
	assert.Equal(t, `cluster cluster3: pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-a"`+"\n", errOut)
	listed := fed.received("/apis/federation/v1beta1/clusters/cluster1/proxy/api/v1/namespaces/team-a/pods")
	require.Len(t, listed, 1)
	assert.Contains(t, listed[0].accept, "application/json;as=Table;v=v1;g=meta.k8s.io")
	assert.Contains(t, listed[0].query, "includeObject=Metadata")
	assert.Empty(t, fed.received("/apis/federation/v1beta1/clusters/cluster1/proxy/apis"), "pods need no discovery")

	// Every namespace, wide, a selector, named clusters.
	out, errOut, err = get("po", "-A", "-o", "wide", "-l", "app=api", "--cluster=cluster1,cluster2")
	require.NoError(t, err)
	assert.Empty(t, errOut)
	assert.Equal(t, [][]string{
		{"CLUSTER", "NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP"},
		{"cluster1", "team-b", "api-1", "1/1", "Running", "0", "5m", "10.0.1.9"},
	}, tableLines(out))

	// One pod by name, as TYPE/NAME and TYPE NAME.
	for _, args := range [][]string{{"pod/web-2"}, {"pods", "web-2"}} {
		out, _, err = get(append(args, "--cluster=cluster1,cluster2")...)
		require.NoError(t, err)
		assert.Equal(t, [][]string{{"CLUSTER", "NAME", "READY", "STATUS", "RESTARTS", "AGE"}, {"cluster2", "web-2", "1/1", "Running", "0", "5m"}}, tableLines(out))
	}

	// A custom resource by its short name, found by the member's
	// discovery, listed without a server-side Table.
	out, _, err = get("wd", "--cluster=cluster2")
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"CLUSTER", "NAME", "AGE"}, {"cluster2", "blue", "60m"}}, tableLines(out))
	assert.NotEmpty(t, fed.received("/apis/federation/v1beta1/clusters/cluster2/proxy/apis/example.com/v1/namespaces/team-a/widgets"))

	// Nothing found.
	out, errOut, err = get("pods", "-n", "nowhere", "--cluster=cluster1")
	require.NoError(t, err)
	assert.Empty(t, out)
	assert.Equal(t, "No resources found in nowhere namespace.\n", errOut)

	// Every member failed: non-zero.
	_, errOut, err = get("pods", "--cluster=cluster3,gone")
	require.ErrorContains(t, err, "no member cluster answered (2 asked)")
	assert.Contains(t, errOut, "cluster cluster3: pods is forbidden")
	assert.Contains(t, errOut, `cluster gone: clusters.federation "gone" not found`)

	// A user who may not list the clusters is told to name them.
	fed.setCanList(false)
	_, _, err = get("pods")
	require.ErrorContains(t, err, "name the members with --cluster")
}

func TestGetFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "pods"}, "--context"},
		{[]string{"get", "--context=fed"}, "accepts between 1 and 2 arg(s)"},
		{[]string{"get", "--context=fed", "pods/a", "b"}, "give TYPE/NAME or TYPE NAME, not both"},
		{[]string{"get", "--context=fed", "pods/"}, "want TYPE, TYPE/NAME or TYPE NAME"},
		{[]string{"get", "--context=fed", "pods,svc"}, "one type at a time"},
		{[]string{"get", "--context=fed", "pods", "-o", "yaml"}, `--output "yaml": only wide is supported`},
		{[]string{"get", "--context=fed", "pods", "-A", "-n", "x"}, "cannot both be given"},
	} {
		_, _, err := runCommand(context.Background(), tc.args...)
		assert.ErrorContains(t, err, tc.want, tc.args)
	}
}

func TestPrintTables(t *testing.T) {
	row := func(ns string, cells ...any) metav1.TableRow {
		raw, _ := json.Marshal(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns}})
		return metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Raw: raw}}
	}
	v1Columns := []metav1.TableColumnDefinition{{Name: "Name"}, {Name: "Size"}, {Name: "Detail", Priority: 1}}
	v2Columns := []metav1.TableColumnDefinition{{Name: "Name"}, {Name: "Phase"}}
	tables := []memberTable{
		{cluster: "a", table: &metav1.Table{ColumnDefinitions: v1Columns, Rows: []metav1.TableRow{row("ns1", "x", json.Number("1500000"), "d")}}},
		{cluster: "b", table: &metav1.Table{ColumnDefinitions: v2Columns, Rows: []metav1.TableRow{row("ns2", "y", "Ready\nmore")}}},
		{cluster: "c", table: &metav1.Table{ColumnDefinitions: v1Columns, Rows: []metav1.TableRow{row("ns1", "z\x1b[31m", nil, "d")}}},
		{cluster: "d", table: &metav1.Table{ColumnDefinitions: v2Columns}},
	}
	var out strings.Builder
	n := printTables(&out, tables, printOptions{namespace: true})
	assert.Equal(t, 3, n)
	assert.Equal(t, ""+
		"CLUSTER   NAMESPACE   NAME        SIZE\n"+
		"a         ns1         x           1500000\n"+
		"c         ns1         z\\x1b[31m   \n"+
		"\n"+
		"CLUSTER   NAMESPACE   NAME   PHASE\n"+
		"b         ns2         y      Ready...\n", out.String())

	out.Reset()
	printTables(&out, tables[:1], printOptions{wide: true})
	assert.Equal(t, "CLUSTER   NAME   SIZE      DETAIL\na         x      1500000   d\n", out.String())
}
