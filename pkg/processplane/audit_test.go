package processplane

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit/policy"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// TestAuditPolicyLevels: the policy init writes is one the apiserver loads,
// and gives each kind of request the level docs/guide/api-server.md promises; Secrets
// never get past Metadata.
func TestAuditPolicyLevels(t *testing.T) {
	p := createdPlane(t, "fed")
	loaded, err := policy.LoadPolicyFromFile(p.path(auditPolicyFile))
	require.NoError(t, err, "the apiserver accepts the policy")
	evaluator := policy.NewPolicyRuleEvaluator(loaded)

	resource := func(verb, group, resource string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{
			User: &user.DefaultInfo{Name: "admin"}, Verb: verb, APIGroup: group, APIVersion: "v1",
			Resource: resource, Namespace: "default", Name: "x", ResourceRequest: true,
		}
	}
	path := func(p string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "system:anonymous"}, Verb: "get", Path: p}
	}
	as := func(name string, a authorizer.AttributesRecord) authorizer.AttributesRecord {
		a.User = &user.DefaultInfo{Name: name}
		return a
	}
	for _, c := range []struct {
		attrs authorizer.AttributesRecord
		want  auditinternal.Level
	}{
		{resource("create", "", "secrets"), auditinternal.LevelMetadata},
		{resource("update", "", "secrets"), auditinternal.LevelMetadata},
		{resource("patch", "", "secrets"), auditinternal.LevelMetadata},
		{resource("get", "", "secrets"), auditinternal.LevelMetadata},
		{resource("list", "", "secrets"), auditinternal.LevelMetadata},
		{resource("create", "", "configmaps"), auditinternal.LevelMetadata},
		{resource("create", "authentication.k8s.io", "tokenreviews"), auditinternal.LevelMetadata},
		{resource("create", "apps", "deployments"), auditinternal.LevelRequest},
		{resource("patch", "federation", "clusters"), auditinternal.LevelRequest},
		{resource("delete", "", "namespaces"), auditinternal.LevelRequest},
		{resource("deletecollection", "rbac.authorization.k8s.io", "rolebindings"), auditinternal.LevelRequest},
		{resource("get", "apps", "deployments"), auditinternal.LevelMetadata},
		{resource("watch", "federation", "clusters"), auditinternal.LevelMetadata},
		{path("/healthz"), auditinternal.LevelNone},
		{path("/livez"), auditinternal.LevelNone},
		{path("/readyz/etcd"), auditinternal.LevelNone},
		{path("/version"), auditinternal.LevelNone},
		{path("/api"), auditinternal.LevelNone},
		{path("/apis/apps/v1"), auditinternal.LevelNone},
		{path("/openapi/v3/apis/apps/v1"), auditinternal.LevelNone},
		{path("/metrics"), auditinternal.LevelMetadata},
		{resource("create", "", "events"), auditinternal.LevelNone},
		{as("system:apiserver", resource("update", "rbac.authorization.k8s.io", "clusterroles")), auditinternal.LevelNone},
		{as("system:federation-controller-manager", resource("update", "apps", "deployments")), auditinternal.LevelMetadata},
		{as("system:federation-controller-manager", resource("update", "", "secrets")), auditinternal.LevelMetadata},
	} {
		got := evaluator.EvaluatePolicyRule(c.attrs)
		assert.Equal(t, c.want, got.Level, "%s %s%s", c.attrs.Verb, c.attrs.Resource, c.attrs.Path)
		assert.Equal(t, []auditinternal.Stage{auditinternal.StageRequestReceived}, got.OmitStages, "one event per request")
	}
}

// TestAuditPolicyIsKept: a policy the person edited survives an init
// retried in the same folder; it is theirs to read.
func TestAuditPolicyIsKept(t *testing.T) {
	p := createdPlane(t, "fed")
	info, err := os.Stat(p.path(auditPolicyFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	edited := "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n"
	require.NoError(t, os.WriteFile(p.path(auditPolicyFile), []byte(edited), 0o600))
	require.NoError(t, p.writeAuditPolicy())
	got, err := os.ReadFile(p.path(auditPolicyFile))
	require.NoError(t, err)
	assert.Equal(t, edited, string(got))
}
