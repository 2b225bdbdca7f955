package deploy_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/kubectl"
	"github.com/federation-v1/federation/test/memberenv"
)

// prometheusOperator is the module whose CRDs (ServiceMonitor,
// PrometheusRule) a member needs to accept the monitoring objects; fetched
// through the Go module proxy and kept in the module cache.
const prometheusOperator = "github.com/prometheus-operator/prometheus-operator@v0.85.0"

// TestServerSideDryRun: every object the chart renders, with each value set,
// and the plain manifests, is accepted by a real kube-apiserver.
func TestServerSideDryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a member cluster")
	}
	c := newChartTool(t)
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(1, 1))
	member := kubectl.Runner{Kubeconfig: env.Kubeconfig, Timeout: time.Minute}
	ctx := context.Background()

	crds := operatorCRDs(t)
	for _, f := range crds {
		_, err := member.Run(ctx, "--context=cluster1", "apply", "--server-side", "-f", f)
		require.NoError(t, err)
	}
	_, err := member.Run(ctx, "--context=cluster1", "wait", "--for=condition=Established", "--timeout=30s",
		"crd/servicemonitors.monitoring.coreos.com", "crd/prometheusrules.monitoring.coreos.com")
	require.NoError(t, err)
	_, err = member.Run(ctx, "--context=cluster1", "create", "namespace", namespace)
	require.NoError(t, err)

	sets := map[string][]string{
		"default":        {zone},
		"external etcd":  {zone, "etcd.servers={https://etcd.example:2379}"},
		"services":       {zone, "apiserver.service.type=LoadBalancer", "apiserver.service.nodePort=30443", "dns.service.type=NodePort", "dns.service.nodePort=30053"},
		"monitoring":     {zone, "serviceMonitor.enabled=true", "prometheusRule.enabled=true", "grafanaDashboard.enabled=true"},
		"etcd x3":        {zone, "etcd.replicas=3", "etcd.persistence.storageClass=standard"},
		"existingSecret": {zone, "certificates.existingSecret=federation-credentials", "serviceMonitor.enabled=true"},
		"no dns, emptyDir, hostNetwork": {"dns.enabled=false", "etcd.persistence.enabled=false", "hostNetwork=true", "internalHost=127.0.0.1",
			"apiserver.extraArgs={--v=2}", "controllerManager.extraArgs={--concurrent-object-syncs=5}"},
	}
	for name, values := range sets {
		t.Run(name, func(t *testing.T) {
			r := c.mustTemplate(t, values...)
			dryRun(t, member, r.yaml, len(r.objects))
		})
	}
	t.Run("the agent chart", func(t *testing.T) { agentDryRun(t, c, member) })
	t.Run("deploy/manifests", func(t *testing.T) {
		for _, f := range []string{"federation.yaml", "monitoring.yaml"} {
			b, err := os.ReadFile(filepath.Join(c.root, "deploy", "manifests", f))
			require.NoError(t, err)
			dryRun(t, member, string(b), len(parseObjects(t, string(b))))
		}
	})
}

// dryRun applies manifest server-side without persisting it and checks that
// every one of its n objects was accepted.
func dryRun(t *testing.T, member kubectl.Runner, manifest string, n int) {
	t.Helper()
	out, err := member.RunWithInput(context.Background(), manifest, "--context=cluster1", "apply", "--server-side",
		"--dry-run=server", "--field-manager=federation-e2e", "-f", "-")
	require.NoError(t, err, out)
	require.Equal(t, n, strings.Count(out, "serverside-applied (server dry run)"), "every object accepted:\n%s", out)
}

// operatorCRDs downloads (once, into the module cache) the prometheus
// operator's module and returns its ServiceMonitor and PrometheusRule CRDs.
func operatorCRDs(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", prometheusOperator)
	cmd.Dir = t.TempDir() // outside the project's module: its go.mod stays as it is
	out, err := cmd.Output()
	require.NoError(t, err, "go mod download %s", prometheusOperator)
	var mod struct{ Dir string }
	require.NoError(t, json.Unmarshal(out, &mod))
	dir := filepath.Join(mod.Dir, "example", "prometheus-operator-crd")
	return []string{
		filepath.Join(dir, "monitoring.coreos.com_servicemonitors.yaml"),
		filepath.Join(dir, "monitoring.coreos.com_prometheusrules.yaml"),
	}
}
