package kubefed

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// earlierJoin is a member's access as a kubefed that recorded no settings
// would have left it: without the annotations.
func earlierJoin(groups []string, podSecurity string) *memberAccess {
	a := desiredMemberAccess("fed", groups, podSecurity)
	a.Role.Annotations, a.Policy.Annotations = nil, nil
	return a
}

func TestRecordedSettings(t *testing.T) {
	groups := []string{"example.com", "cert-manager.io"}
	for _, tt := range []struct {
		name        string
		role        *rbacv1.ClusterRole
		policy      *admissionregistrationv1.ValidatingAdmissionPolicy
		groups      []string
		podSecurity string
	}{
		{"recorded by this join", desiredMemberAccess("fed", groups, podSecurityRestricted).Role,
			desiredMemberAccess("fed", groups, podSecurityRestricted).Policy, groups, podSecurityRestricted},
		{"recorded, none", desiredMemberAccess("fed", nil, podSecurityBaseline).Role,
			desiredMemberAccess("fed", nil, podSecurityBaseline).Policy, nil, podSecurityBaseline},
		{"told by the rules of an earlier join", earlierJoin(groups, podSecurityRestricted).Role,
			earlierJoin(groups, podSecurityRestricted).Policy, groups, podSecurityRestricted},
		{"earlier join, baseline, no groups", earlierJoin(nil, podSecurityBaseline).Role,
			earlierJoin(nil, podSecurityBaseline).Policy, nil, podSecurityBaseline},
		{"the role's rule gone, the policy still says", newMemberAccess("fed").Role,
			earlierJoin(groups, podSecurityBaseline).Policy, groups, podSecurityBaseline},
		{"the policy gone, the role still says", earlierJoin(groups, podSecurityBaseline).Role, nil, groups, podSecurityBaseline},
		{"nothing there", nil, nil, nil, podSecurityBaseline},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := recordedSettings(tt.role, tt.policy)
			assert.Equal(t, tt.groups, s.customResourceGroups)
			assert.Equal(t, tt.podSecurity, s.podSecurity)
		})
	}

	t.Run("the record wins over the rules", func(t *testing.T) {
		role := desiredMemberAccess("fed", []string{"example.com"}, podSecurityBaseline).Role
		role.Annotations[customResourceGroupsAnnotation] = ""
		policy := desiredMemberAccess("fed", nil, podSecurityBaseline).Policy
		policy.Annotations[podSecurityAnnotation] = "privileged"
		s := recordedSettings(role, policy)
		assert.Empty(t, s.customResourceGroups)
		assert.Equal(t, podSecurityBaseline, s.podSecurity, "a level the policy does not enforce is not taken")
	})
}

func TestDescribeKept(t *testing.T) {
	assert.Empty(t, joinSettings{podSecurity: podSecurityBaseline}.describeKept(), "join's defaults go unsaid")
	assert.Equal(t, "--pod-security=restricted --custom-resource-groups=a.com,b.com",
		joinSettings{podSecurity: podSecurityRestricted, customResourceGroups: []string{"a.com", "b.com"}}.describeKept())
	assert.Empty(t, joinSettings{podSecurity: podSecurityRestricted, podSecurityGiven: true,
		customResourceGroups: []string{"a.com"}, groupsGiven: true}.describeKept(), "given ones are not kept")
}

func TestRoleChanges(t *testing.T) {
	want := desiredMemberAccess("fed", nil, podSecurityBaseline).Role
	assert.Empty(t, roleChanges(want.DeepCopy(), want), "the same role")
	assert.Equal(t, []string{"27 rules"}, roleChanges(nil, &rbacv1.ClusterRole{Rules: make([]rbacv1.PolicyRule, 27)}))

	// An earlier version: statefulsets listed only, no rights on RBAC.
	old := want.DeepCopy()
	old.Annotations = nil
	for i, r := range old.Rules {
		if slices.Equal(r.APIGroups, []string{"apps"}) && slices.Contains(r.Resources, "statefulsets") && len(r.Verbs) > 1 {
			old.Rules[i].Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(s string) bool { return s == "statefulsets" })
		}
	}
	old.Rules = slices.DeleteFunc(old.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, rbacv1.GroupName)
	})
	assert.Equal(t, []string{
		"+4 rules, -1 rules",
		"new rights on clusterroles.rbac.authorization.k8s.io/federation-fed-namespace-rbac, rolebindings.rbac.authorization.k8s.io, roles.rbac.authorization.k8s.io, statefulsets.apps",
		`annotation federation.kubernetes.io/custom-resource-groups="" added`,
	}, roleChanges(old, want))
	assert.Equal(t, []string{
		"+1 rules, -4 rules",
		"rights removed on clusterroles.rbac.authorization.k8s.io/federation-fed-namespace-rbac, rolebindings.rbac.authorization.k8s.io, roles.rbac.authorization.k8s.io, statefulsets.apps",
		"annotation federation.kubernetes.io/custom-resource-groups removed",
	}, roleChanges(want, old), "a refresh may narrow too")

	// A member joined before the federation read its events: the refresh
	// adds the right to watch them.
	noEvents := want.DeepCopy()
	for i, r := range noEvents.Rules {
		if slices.Contains(r.Resources, "events") {
			noEvents.Rules[i].Verbs = []string{"create", "patch", "update"}
		}
	}
	assert.Equal(t, []string{"+1 rules, -1 rules", "new rights on events"}, roleChanges(noEvents, want))

	reordered := want.DeepCopy()
	reordered.Rules[0], reordered.Rules[1] = reordered.Rules[1], reordered.Rules[0]
	assert.Equal(t, []string{"rules reordered"}, roleChanges(reordered, want))

	many := []rbacv1.PolicyRule{{APIGroups: []string{"a.com", "b.com", "c.com", "d.com", "e.com", "f.com"}, Resources: []string{"*"}, Verbs: readWrite}}
	assert.Equal(t, []string{"+1 rules", "new rights on *.a.com, *.b.com, *.c.com, *.d.com and 2 more"}, ruleChanges(nil, many))
}

func TestPolicyChanges(t *testing.T) {
	want := desiredMemberAccess("fed", []string{"example.com"}, podSecurityRestricted).Policy
	assert.Empty(t, policyChanges(want.DeepCopy(), want))
	assert.Equal(t, []string{"33 validations"}, policyChanges(nil, &admissionregistrationv1.ValidatingAdmissionPolicy{
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{Validations: make([]admissionregistrationv1.Validation, 33)}}))

	old := want.DeepCopy()
	old.Spec.Validations = old.Spec.Validations[:len(old.Spec.Validations)-2]
	old.Spec.Variables = old.Spec.Variables[:1]
	old.Annotations[podSecurityAnnotation] = podSecurityBaseline
	assert.Equal(t, []string{
		"+2 validations",
		"variables changed",
		`annotation federation.kubernetes.io/pod-security="restricted" (was "baseline")`,
	}, policyChanges(old, want))

	bindingWant := newMemberAccess("fed").PolicyBinding
	assert.Empty(t, policyBindingChanges(bindingWant.DeepCopy(), bindingWant))
	bindingOld := bindingWant.DeepCopy()
	bindingOld.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn}
	assert.Equal(t, []string{"spec changed"}, policyBindingChanges(bindingOld, bindingWant))

	roleBinding := newMemberAccess("fed").Binding
	assert.Empty(t, bindingChanges(roleBinding.DeepCopy(), roleBinding))
	otherSubject := roleBinding.DeepCopy()
	otherSubject.Subjects[0].Name = "someone"
	otherSubject.Labels = map[string]string{"team": "a", federationv1beta1.FederationLabel: "fed"}
	assert.Equal(t, []string{"subjects changed", "label team removed"}, bindingChanges(otherSubject, roleBinding))
}

func TestSameMember(t *testing.T) {
	cluster := func(connection federationv1beta1.ClusterConnection, address string) *federationv1beta1.Cluster {
		return &federationv1beta1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}, Spec: federationv1beta1.ClusterSpec{
			Connection:                 connection,
			ServerAddressByClientCIDRs: []federationv1beta1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: address}},
		}}
	}
	assert.NoError(t, sameMember(cluster("", "https://127.0.0.1:6443"), "https://127.0.0.1:6443"))
	assert.NoError(t, sameMember(cluster("", "https://API.example.com/"), "https://api.example.com:443"))
	err := sameMember(cluster("", "https://127.0.0.1:6443"), "https://127.0.0.1:7443")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `it is at https://127.0.0.1:7443, but cluster "cluster1" was joined at https://127.0.0.1:6443`)
	assert.NoError(t, sameMember(cluster(federationv1beta1.ConnectionAgent, "https://elsewhere:443"), "https://127.0.0.1:7443"),
		"an agent member's address may be any (--server-address): its account tells")
}

func TestRefreshRefusesJoinOnlyFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--connection=agent"}, "--connection is not for --refresh"},
		{[]string{"--agent=local"}, "--agent is not for --refresh"},
		{[]string{"--server-address=https://x"}, "--server-address is not for --refresh"},
		{[]string{"--agent-image=x"}, "--agent-image is not for --refresh"},
		{[]string{"--pod-security=strict"}, "--pod-security"},
		{[]string{"--custom-resource-groups=apps.k8s.io"}, "a group of Kubernetes itself"},
		{[]string{"--adopt-namespaces=kube-system"}, "--adopt-namespaces"},
	} {
		cmd := NewCommand(&bytes.Buffer{}, &bytes.Buffer{})
		cmd.SetArgs(append([]string{"join", "cluster1", "--context=fed", "--refresh"}, tt.args...))
		err := cmd.Execute()
		require.Error(t, err, "%v", tt.args)
		assert.Contains(t, err.Error(), tt.want, "%v", tt.args)
	}
}

// dryRunning makes the fake member keep nothing of a dry-run apply, as a
// real one does.
func dryRunning(member *fake.Clientset) {
	tracker := member.Tracker()
	member.PrependReactor("patch", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		p := a.(clienttesting.PatchActionImpl)
		if len(p.PatchOptions.DryRun) == 0 {
			return false, nil, nil
		}
		gvr, ns, name := p.GetResource(), p.GetNamespace(), p.GetName()
		before, getErr := tracker.Get(gvr, ns, name)
		_, obj, err := clienttesting.ObjectReaction(tracker)(a)
		if getErr == nil {
			_ = tracker.Update(gvr, before, ns)
		} else {
			_ = tracker.Delete(gvr, ns, name)
		}
		return true, obj, err
	})
}

// writes are the member writes of actions, dry runs left out.
func writes(actions []clienttesting.Action) []string {
	var out []string
	for _, a := range actions {
		if p, ok := a.(clienttesting.PatchActionImpl); ok && len(p.PatchOptions.DryRun) > 0 {
			continue
		}
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
		}
	}
	return out
}

func TestRefreshMemberAccess(t *testing.T) {
	ctx := context.Background()
	// A member joined by an earlier version: statefulsets listed only, no
	// namespace RBAC role, no proxy user, a validation fewer.
	old := earlierJoin([]string{"example.com"}, podSecurityBaseline)
	old.Role.Rules = slices.DeleteFunc(old.Role.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, rbacv1.GroupName) || slices.Contains(r.Verbs, "impersonate")
	})
	old.Policy.Spec.Validations = old.Policy.Spec.Validations[1:]
	member := fake.NewClientset(old.Account, old.Role, old.Binding)
	dryRunning(member)
	require.NoError(t, installPolicy(ctx, member, old, &rollback{}))

	settings := recordedSettings(old.Role, old.Policy)
	want := desiredMemberAccess("fed", settings.customResourceGroups, settings.podSecurity)

	member.ClearActions()
	var out bytes.Buffer
	n, err := refreshMemberAccess(ctx, &out, member, want, true)
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	assert.Empty(t, writes(member.Actions()), "a dry run writes nothing")
	got, err := member.RbacV1().ClusterRoles().Get(ctx, "federation-fed", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, old.Role.Rules, got.Rules)

	out.Reset()
	n, err = refreshMemberAccess(ctx, &out, member, want, false)
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	assert.Equal(t, []string{
		`ValidatingAdmissionPolicy federation-fed updated: +1 validations; annotation federation.kubernetes.io/pod-security="baseline" added`,
		`ClusterRole federation-fed updated: +5 rules; new rights on clusterroles.rbac.authorization.k8s.io/federation-fed-namespace-rbac, rolebindings.rbac.authorization.k8s.io, roles.rbac.authorization.k8s.io, userextras/federation.kubernetes.io/caller.authentication.k8s.io and 1 more; annotation federation.kubernetes.io/custom-resource-groups="example.com" added`,
		"ClusterRole federation-fed-namespace-rbac created: 3 rules",
		"ClusterRole federation-fed-proxy created: 9 rules",
		"ClusterRoleBinding federation-fed-proxy created",
	}, strings.Split(strings.TrimSpace(out.String()), "\n"))
	got, err = member.RbacV1().ClusterRoles().Get(ctx, "federation-fed", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, want.Role.Rules, got.Rules)
	policy, err := member.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "federation-fed", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, want.Policy.Spec, policy.Spec)

	member.ClearActions()
	out.Reset()
	n, err = refreshMemberAccess(ctx, &out, member, want, false)
	require.NoError(t, err)
	assert.Zero(t, n, "a second refresh changes nothing:\n%s", out.String())
	assert.Empty(t, out.String())
	assert.Empty(t, writes(member.Actions()))
}

func TestAddGroupsKeepsThoseTheClusterHas(t *testing.T) {
	assert.Equal(t, []string{"a.com", "b.com", "c.com"}, addGroups([]string{"a.com", "b.com"}, []string{"b.com", "c.com"}))
	assert.Equal(t, []string{"c.com"}, addGroups(nil, []string{"c.com"}))
}
