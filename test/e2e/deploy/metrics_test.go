package deploy_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// TestMonitoringMetricsExist: every metric the Grafana dashboard and the
// alerts name is one the federation serves (an alert on a metric that does
// not exist never fires). Names come from the federation's own metric
// definitions in the Go sources (their series appear only once there is
// something to count) and from a running control plane's /metrics.
func TestMonitoringMetricsExist(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a local federation")
	}
	root, err := memberenv.RepoRoot()
	require.NoError(t, err)
	served := registeredMetrics(t, root)
	require.Contains(t, served, "federation_sync_propagation_seconds_bucket", "the Go sources were read")

	u := fedenv.NewUser(t, binDir)
	u.InitFederation("fed", "--dns-provider=coredns", "--dns-zone-name=example.com.")
	plane := u.Plane("fed")
	controllers, err := u.ControllerManagerMetrics("fed")
	require.NoError(t, err)
	apiserver, err := u.Kubectl().Run(context.Background(), "--context=fed", "get", "--raw", "/metrics")
	require.NoError(t, err)
	// federation-dns counts queries once it has answered one.
	_, _, err = (&dns.Client{Timeout: 5 * time.Second}).Exchange(new(dns.Msg).SetQuestion("nothing.example.com.", dns.TypeA), plane.DNS.Address)
	require.NoError(t, err)
	dnsMetrics := httpGet(t, "http://"+plane.DNS.MetricsAddress+"/metrics")
	for _, exposition := range []string{controllers, apiserver, dnsMetrics} {
		for name := range exposedMetrics(exposition) {
			served[name] = true
		}
	}

	dashboard, err := os.ReadFile(filepath.Join(root, "deploy", "monitoring", "grafana-dashboard.json"))
	require.NoError(t, err)
	rules, err := os.ReadFile(filepath.Join(root, "deploy", "monitoring", "prometheus-rules.yaml"))
	require.NoError(t, err)
	exprs := append(dashboardExprs(t, dashboard), ruleExprs(t, rules)...)
	require.NotEmpty(t, exprs)
	used := map[string]bool{}
	for _, e := range exprs {
		for _, name := range metricNames(e) {
			used[name] = true
		}
	}
	for _, want := range []string{"federation_cluster_ready", "federation_sync_errors_total", "federation_sync_member_writes_total",
		"federation_sync_propagation_seconds_bucket", "workqueue_depth", "apiserver_request_total", "leader_election_master_status"} {
		assert.Contains(t, used, want, "the kit uses %s", want)
	}
	var missing []string
	for name := range used {
		if !served[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "metrics the dashboard or alerts use that the federation does not serve")
	// The check can fail: a name nobody serves is caught.
	assert.False(t, served["federation_sync_writes_total"])
}

// metricDefinition matches the federation's metric options in Go:
// Namespace: "federation", Subsystem: "sync", Name: "errors_total".
var metricDefinition = regexp.MustCompile(`Namespace:\s*"(\w+)",\s*(?:Subsystem:\s*"(\w+)",\s*)?Name:\s*"(\w+)"`)

// registeredMetrics reads the metric names defined under pkg/, with the
// series names a histogram adds.
func registeredMetrics(t *testing.T, root string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(root, "pkg"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range metricDefinition.FindAllStringSubmatch(string(src), -1) {
			parts := []string{m[1]}
			if m[2] != "" {
				parts = append(parts, m[2])
			}
			name := strings.Join(append(parts, m[3]), "_")
			for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
				names[name+suffix] = true
			}
		}
		return nil
	})
	require.NoError(t, err)
	return names
}

// exposedMetrics lists the series names of a Prometheus text exposition.
func exposedMetrics(exposition string) map[string]bool {
	names := map[string]bool{}
	for _, line := range strings.Split(exposition, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		names[name] = true
	}
	return names
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s", url)
	return string(body)
}

// dashboardExprs are the PromQL queries of the dashboard's panels.
func dashboardExprs(t *testing.T, dashboard []byte) []string {
	t.Helper()
	var d struct {
		Panels []struct {
			Targets []struct{ Expr string }
		}
	}
	require.NoError(t, json.Unmarshal(dashboard, &d), "the Grafana dashboard is JSON")
	var exprs []string
	for _, p := range d.Panels {
		for _, target := range p.Targets {
			exprs = append(exprs, target.Expr)
		}
	}
	return exprs
}

// ruleExprs are the expressions of a Prometheus rule file.
func ruleExprs(t *testing.T, rules []byte) []string {
	t.Helper()
	var f struct {
		Groups []struct {
			Rules []struct{ Expr string }
		}
	}
	require.NoError(t, yaml.Unmarshal(rules, &f), "the alerts are a Prometheus rule file")
	var exprs []string
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	return exprs
}

var (
	// Parts of PromQL that hold no metric name: label matchers, ranges,
	// grouping clauses, strings.
	notNames   = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]|\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)|"[^"]*"`)
	identifier = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	keywords   = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true}
)

// metricNames are the metric names a PromQL expression selects: its
// identifiers that are neither functions, keywords nor numbers.
func metricNames(expr string) []string {
	var names []string
	for _, m := range identifier.FindAllString(notNames.ReplaceAllString(expr, " "), -1) {
		if strings.HasSuffix(m, "(") || keywords[m] {
			continue
		}
		names = append(names, m)
	}
	return names
}
