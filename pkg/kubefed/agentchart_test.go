package kubefed

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chartutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
)

func agentFlags(t *testing.T, args ...string) (*agentChartOptions, *pflag.FlagSet) {
	t.Helper()
	o := &agentChartOptions{}
	f := pflag.NewFlagSet("join", pflag.ContinueOnError)
	o.addFlags(f)
	require.NoError(t, f.Parse(args))
	return o, f
}

func TestAgentChartFlags(t *testing.T) {
	values := filepath.Join(t.TempDir(), "values.yaml")
	require.NoError(t, os.WriteFile(values, []byte("hostNetwork: true\n"), 0o600))
	o, f := agentFlags(t, "--agent-values="+values, "--agent-image=registry.example.com/federation:v1")
	require.NoError(t, o.validate(f, connectionAgent, agentInMember))
	assert.Equal(t, true, o.values["hostNetwork"])

	for _, c := range []struct {
		args              []string
		connection, agent string
		want              string
	}{
		{[]string{"--agent-image=x"}, connectionAgent, agentLocal, "--agent-image: only for --connection=agent --agent=deployment"},
		{[]string{"--agent-values=" + values, "--agent-federation-address=https://f"}, connectionDirect, agentInMember, "--agent-values, --agent-federation-address: only for"},
		{[]string{"--agent-image=a/b@sha256:00"}, connectionAgent, agentInMember, `--agent-image "a/b@sha256:00": want REPOSITORY[:TAG]`},
		{[]string{"--agent-values=/nonexistent.yaml"}, connectionAgent, agentInMember, "--agent-values: "},
		{[]string{"--agent-federation-address=fed:443"}, connectionAgent, agentInMember, `--agent-federation-address "fed:443": want an https:// URL`},
	} {
		o, f := agentFlags(t, c.args...)
		assert.ErrorContains(t, o.validate(f, c.connection, c.agent), c.want, "%v", c.args)
	}
}

// renderAgentChart renders the embedded chart as join does, without a member.
func renderAgentChart(t *testing.T, a agentSetup, opts *agentChartOptions) ([]*unstructured.Unstructured, error) {
	t.Helper()
	chart, err := embeddedAgentChart()
	require.NoError(t, err)
	values, err := a.chartValues(opts, "federation-fed-token")
	if err != nil {
		return nil, err
	}
	values, err = chart.Coalesce(values)
	require.NoError(t, err)
	return chart.Render(agentRelease, "federation-system", values, chartutil.DefaultCapabilities)
}

func typed[T any](t *testing.T, objs []*unstructured.Unstructured, kind, name string) *T {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			out := new(T)
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, out))
			return out
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
	return nil
}

func TestAgentChartRendered(t *testing.T) {
	a := agentSetup{cluster: "c1", federationName: "fed", federation: "https://127.0.0.1:6443", federationCA: []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), bootstrapToken: "abcdef.0123456789abcdef"}
	opts := &agentChartOptions{image: "localhost/federation:v1.2.3", values: map[string]any{
		"hostNetwork": true, "httpsProxy": "http://proxy:3128", "noProxy": "10.0.0.0/8",
		// join's own values win over the file's.
		"cluster": "other", "image": map[string]any{"pullPolicy": "Never", "tag": "old"},
	}}
	objs, err := renderAgentChart(t, a, opts)
	require.NoError(t, err)
	var names []string
	for _, o := range objs {
		names = append(names, o.GetKind()+"/"+o.GetName())
		assert.Equal(t, "federation-system", o.GetNamespace(), o.GetName())
		assert.Equal(t, map[string]string{
			"app.kubernetes.io/name": "federation-agent", "app.kubernetes.io/instance": "federation-agent",
			"app.kubernetes.io/managed-by": "kubefed", "app.kubernetes.io/version": "v1.2.3",
			"federation.k8s.io/agent-cluster": "c1", "federation.k8s.io/agent-federation": "fed",
		}, o.GetLabels(), "unjoin selects them by %s", agentSelector("fed", "c1"))
	}
	assert.ElementsMatch(t, []string{"ServiceAccount/federation-agent", "Role/federation-agent", "RoleBinding/federation-agent",
		"Secret/federation-agent-credential", "Secret/federation-agent-bootstrap", "ConfigMap/federation-agent-ca", "Deployment/federation-agent"}, names)

	role := typed[rbacv1.Role](t, objs, "Role", "federation-agent")
	assert.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"federation-agent-credential"},
		Verbs: []string{"get", "update", "patch"}}}, role.Rules, "the agent's own account keeps its one Secret, and nothing else")
	credential := typed[corev1.Secret](t, objs, "Secret", "federation-agent-credential")
	assert.Equal(t, corev1.SecretTypeOpaque, credential.Type)
	assert.Empty(t, credential.Data)
	assert.Equal(t, "abcdef.0123456789abcdef", string(typed[corev1.Secret](t, objs, "Secret", "federation-agent-bootstrap").Data["token"]))
	assert.Equal(t, string(a.federationCA), typed[corev1.ConfigMap](t, objs, "ConfigMap", "federation-agent-ca").Data["ca.crt"])

	d := typed[appsv1.Deployment](t, objs, "Deployment", "federation-agent")
	assert.Equal(t, int32(1), *d.Spec.Replicas)
	assert.Equal(t, appsv1.RecreateDeploymentStrategyType, d.Spec.Strategy.Type)
	pod := d.Spec.Template.Spec
	assert.Equal(t, "federation-agent", pod.ServiceAccountName)
	assert.True(t, pod.HostNetwork, "the values file is used")
	assert.True(t, *pod.SecurityContext.RunAsNonRoot)
	assert.Equal(t, int64(65532), *pod.SecurityContext.RunAsUser)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, pod.SecurityContext.SeccompProfile.Type)
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	assert.Equal(t, "localhost/federation:v1.2.3", c.Image)
	assert.Equal(t, corev1.PullNever, c.ImagePullPolicy)
	assert.True(t, *c.SecurityContext.ReadOnlyRootFilesystem)
	assert.Equal(t, []corev1.Capability{"ALL"}, c.SecurityContext.Capabilities.Drop)
	assert.Equal(t, []string{
		"/usr/local/bin/federation-agent", "--cluster=c1", "--federation=https://127.0.0.1:6443",
		"--federation-ca-file=/etc/federation-agent/federation/ca.crt", "--token-file=/etc/federation-agent/bootstrap/token",
		"--member-token-file=/etc/federation-agent/member/token",
		"--credential-secret=federation-system/federation-agent-credential", "--metrics-bind-address=:10270",
	}, c.Command)
	assert.Equal(t, []corev1.EnvVar{{Name: "HTTPS_PROXY", Value: "http://proxy:3128"}, {Name: "NO_PROXY", Value: "10.0.0.0/8,$(KUBERNETES_SERVICE_HOST)"}}, c.Env)
	assert.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)
	assert.Equal(t, "metrics", c.ReadinessProbe.HTTPGet.Port.String())
	secrets := sets.New[string]()
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			secrets.Insert(v.Secret.SecretName)
		}
	}
	assert.Equal(t, sets.New("federation-agent-bootstrap", "federation-fed-token"), secrets, "the join account's token is mounted")
}

func TestAgentChartRefusesBadValues(t *testing.T) {
	a := agentSetup{cluster: "c1", federationName: "fed", federation: "https://fed", federationCA: []byte("PEM"), bootstrapToken: "abcdef.0123456789abcdef"}
	for _, c := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"federation": map[string]any{"caCertHash": "sha256:" + "ab"}}, "caCertHash"},
		{map[string]any{"federation": map[string]any{"caCertHash": "sha256:0000000000000000000000000000000000000000000000000000000000000000"}}, "give exactly one of federation.ca"},
		{map[string]any{"metrics": map[string]any{"port": 0}}, "/metrics/port"},
		{map[string]any{"hostNetwrok": true}, "hostNetwrok"},
		{map[string]any{"fullnameOverride": "Federation Fed"}, "fullnameOverride"},
		{map[string]any{"fullnameOverride": "federation-fed"}, "like the join account's"},
	} {
		_, err := renderAgentChart(t, a, &agentChartOptions{image: "x:y", values: c.values})
		assert.ErrorContains(t, err, c.want, "%v", c.values)
	}
	_, err := renderAgentChart(t, agentSetup{cluster: "c1", federationName: "fed", federation: "http://fed"}, &agentChartOptions{image: "x:y"})
	assert.ErrorContains(t, err, `the federation context's server "http://fed", which the agent would dial`)
	_, err = renderAgentChart(t, a, &agentChartOptions{image: "x:y", federationAddresses: []string{"https://127.0.0.1:1/a: b"}})
	assert.ErrorContains(t, err, "federation/addresses")
}
