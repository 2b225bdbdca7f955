package security_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer/guard/repairbudget"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
)

// The federation must not be a confused deputy: its identity in a member
// can do more there than any tenant, so a tenant's work reaches a member
// only where that tenant's ownership reaches. Each attack below is one a
// hostile tenant made work before; each must stay refused.

func init() {
	attacks["tenancy: hostile objects cost a bounded number of member writes"] = tenancyWriteLoops
	attacks["tenancy: RoleBindings to system: groups and users are refused"] = tenancySystemSubjects
	attacks["tenancy: adopting takes a permission of its own"] = tenancyAdoptionPermission
	attacks["tenancy: nothing is placed in a member namespace the federation did not create"] = tenancyForeignNamespace
	attacks["tenancy: an HPA cannot scale a member's own Deployment"] = tenancyHPATarget
	attacks["tenancy: the member policy is Pod Security baseline in every namespace"] = tenancyMemberBaseline
	attacks["tenancy: externalIPs are refused"] = tenancyExternalIPs
	attacks["tenancy: service accounts must be the federation's own"] = tenancyServiceAccounts
	attacks["tenancy: a ResourceQuota holds at the federation"] = tenancyQuota
	attacks["tenancy: overrides cannot change what is checked, nor grow without bound"] = tenancyOverrides
	attacks["tenancy: pods use only the federation's Secrets, ConfigMaps and claims"] = tenancyPodReferences
	attacks["tenancy: claims never take another team's volume"] = tenancyClaims
	attacks["tenancy: a copy goes when what it names stops being the federation's"] = tenancyReferenceGoes
	attacks["tenancy: selectors reach only the federation's pods"] = tenancySelectors
	attacks["tenancy: an optional reference the member makes afterwards takes the copy out"] = tenancyOptionalReferences
	attacks["tenancy: names a member resolves to objects the federation never propagates are refused"] = tenancyMemberNames
}

// loopWindow is how long the write-loop attack is watched.
const loopWindow = 60 * time.Second

// memberConfigMap creates a ConfigMap of the member's own in its namespace
// ns (another team's data), removed when the test ends.
func (f *fixture) memberConfigMap(ns, name, value string) {
	f.t.Helper()
	admin := f.memberClient()
	_, err := admin.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"owner": value},
	}, metav1.CreateOptions{})
	require.NoError(f.t, err)
	f.t.Cleanup(func() { _ = admin.CoreV1().ConfigMaps(ns).Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// memberData is the owner key of a member ConfigMap ("" when absent).
func (f *fixture) memberData(ns, name string) string {
	f.t.Helper()
	cm, err := f.memberClient().CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	require.NoError(f.t, err)
	return cm.Data["owner"]
}

// waitEvent waits for an event of reason on the federated object
// kind/name in ns whose message holds want.
func (f *fixture) waitEvent(ns, kind, name, reason, want string) {
	f.t.Helper()
	require.NoError(f.t, poll.Until(context.Background(), converge, fmt.Sprintf("a %s event on %s %s/%s saying %q", reason, kind, ns, name, want), func(context.Context) error {
		out, err := f.as("fed", "get", "events", "-n", ns, "--field-selector",
			"involvedObject.kind="+kind+",involvedObject.name="+name+",reason="+reason, "-o", "jsonpath={.items[*].message}")
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		if !strings.Contains(out, want) {
			return fmt.Errorf("events say %q", out)
		}
		return nil
	}))
}

// memberWrites sums the controller manager's member writes to the member
// of the given types and verbs.
func (f *fixture) memberWrites(types []string, verbs ...string) float64 {
	f.t.Helper()
	body, err := f.u.ControllerManagerMetrics("fed")
	require.NoError(f.t, err)
	total := 0.0
	for _, typ := range types {
		for _, verb := range verbs {
			byCluster, err := fedenv.MetricByLabel(body, "federation_sync_member_writes_total", "cluster", map[string]string{"type": typ, "verb": verb})
			require.NoError(f.t, err)
			total += byCluster[member]
		}
	}
	return total
}

// fight plays a member controller that will not let the federation have
// its way with ConfigMap ns/name: whenever the member's copy is the
// federation's, it is put back (revert) until ctx ends. It returns how
// many times it acted: once for the federation's first write, then once
// per repair.
func fight(ctx context.Context, member kubernetes.Interface, ns, name string, revert func(context.Context, *corev1.ConfigMap) error) int {
	acted := 0
	for ctx.Err() == nil {
		w, err := member.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
		if err != nil {
			continue
		}
		for e := range w.ResultChan() {
			cm, ok := e.Object.(*corev1.ConfigMap)
			if !ok || e.Type == watch.Deleted || cm.Data["owner"] == "member" {
				continue
			}
			if revert(ctx, cm) == nil {
				acted++
			}
		}
		w.Stop()
	}
	return acted
}

// tenancyWriteLoops: objects made to set the federation against a member
// controller (the root CA publisher's ConfigMap, adopted; a copy a
// controller keeps changing back; one it keeps deleting) cost at most the
// repair budget's writes, and are reported, in a minute of fighting.
func tenancyWriteLoops(f *fixture) {
	ctx := context.Background()
	member := f.memberClient()
	ns := tenantNamespace
	rootCA, err := member.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	require.NoError(f.t, err, "the member publishes its CA in every namespace")

	// The admin may adopt; the root CA's ConfigMap is never adopted even so.
	adopt := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kube-root-ca.crt\n  namespace: %s\n  annotations: {%s: adopt}\ndata: {ca.crt: attacker}\n",
		ns, federationv1beta1.ConflictResolutionAnnotation)
	out, err := f.applyAs("fed", adopt)
	require.NoError(f.t, err, out)
	f.deleteWhenDone("configmap", ns, "kube-root-ca.crt")
	f.waitEvent(ns, "ConfigMap", "kube-root-ca.crt", "ConflictInCluster", "the federation never takes it over")

	for _, name := range []string{"sec-drift", "sec-drift-deleted"} {
		out, err := f.applyAs(tenant, configMap(ns, name, "owner: federation"))
		require.NoError(f.t, err, out)
		f.deleteWhenDone("configmap", ns, name)
	}
	require.NoError(f.t, poll.Until(ctx, converge, "the drift ConfigMaps in the member", func(ctx context.Context) error {
		for _, name := range []string{"sec-drift", "sec-drift-deleted"} {
			if _, err := member.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		return nil
	}))

	types := []string{"configmaps", "secrets"}
	before := f.memberWrites(types, "apply", "create", "patch")
	window, cancel := context.WithTimeout(ctx, loopWindow)
	defer cancel()
	var changedBack, deleted int
	var fighters sync.WaitGroup
	fighters.Go(func() {
		changedBack = fight(window, member, ns, "sec-drift", func(ctx context.Context, cm *corev1.ConfigMap) error {
			cm.Data = map[string]string{"owner": "member"}
			_, err := member.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
			return err
		})
	})
	fighters.Go(func() {
		deleted = fight(window, member, ns, "sec-drift-deleted", func(ctx context.Context, cm *corev1.ConfigMap) error {
			return member.CoreV1().ConfigMaps(ns).Delete(ctx, cm.Name, metav1.DeleteOptions{})
		})
	})
	fighters.Wait()
	writes := f.memberWrites(types, "apply", "create", "patch") - before

	// Once for the federation's first write, then once per repair, and
	// once more for the first repair of a copy we created, which applies
	// twice around the hand-over of its create's fields.
	f.t.Logf("in %s: changed back %d times, deleted %d times; the federation wrote %.0f times", loopWindow, changedBack, deleted, writes)
	assert.Positive(f.t, changedBack-1, "the federation repaired the change at least once")
	assert.LessOrEqual(f.t, changedBack-1, repairbudget.DefaultMax+1, "repairs of a changed copy")
	assert.Positive(f.t, deleted-1, "the federation recreated the copy at least once")
	assert.LessOrEqual(f.t, deleted-1, repairbudget.DefaultMax, "re-creations of a deleted copy")
	// A repair is at most three writes (a create, or an apply; an update
	// of a copy we created also hands its create's fields to our applies: a
	// patch and an apply more), so two copies cost at most 6 budgets' worth
	// in the window, where a write war costs a thousand.
	assert.LessOrEqual(f.t, writes, float64(2*3*repairbudget.DefaultMax), "member writes of ConfigMaps and Secrets in %s", loopWindow)
	f.waitEvent(ns, "ConfigMap", "sec-drift", "DriftConflict", "left as the member has it")

	got, err := member.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	require.NoError(f.t, err)
	assert.Equal(f.t, rootCA.Data, got.Data, "the member's CA bundle")
	assert.Empty(f.t, got.Labels[federationv1beta1.FederationLabel])
}

// tenancySystemSubjects: a RoleBinding to system:unauthenticated (or any
// system: group or user) would make every anonymous caller of every
// member admin of the namespace. The federation refuses it, and so does
// the member's policy should the federation ever send one.
func tenancySystemSubjects(f *fixture) {
	ns := teamAdminNamespace
	for _, subject := range []string{
		"--group=system:unauthenticated", "--group=system:authenticated", "--group=system:serviceaccounts",
		"--group=system:serviceaccounts:" + ns, "--user=system:anonymous", "--group=system:masters",
	} {
		out, err := f.as(teamAdmin, "create", "rolebinding", "sec-open", "--clusterrole=admin", subject, "-n", ns)
		f.refused(out, err, "system:")
	}
	out, err := f.as(teamAdmin, "create", "rolebinding", "sec-sa", "--clusterrole=view", "--serviceaccount=kube-system:default", "-n", ns)
	f.refused(out, err, "kube-system")

	// Positive control: a binding to a person of the team propagates.
	out, err = f.as(teamAdmin, "create", "rolebinding", "sec-carol", "--clusterrole=view", "--user=carol", "-n", ns)
	require.NoError(f.t, err, out)
	f.deleteWhenDone("rolebinding", ns, "sec-carol")
	mc := f.memberClient()
	require.NoError(f.t, poll.Until(context.Background(), converge, "RoleBinding sec-carol in the member", func(ctx context.Context) error {
		_, err := mc.RbacV1().RoleBindings(ns).Get(ctx, "sec-carol", metav1.GetOptions{})
		return err
	}))

	// A Role of the member's own of the same name as the federation's: in
	// the member a binding would grant the member's Role, not the one RBAC
	// checked at the federation.
	_, err = mc.RbacV1().Roles(ns).Create(context.Background(), &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "sec-ops", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}},
	}, metav1.CreateOptions{})
	require.NoError(f.t, err)
	f.t.Cleanup(func() { _ = mc.RbacV1().Roles(ns).Delete(context.Background(), "sec-ops", metav1.DeleteOptions{}) })
	out, err = f.as(teamAdmin, "create", "role", "sec-ops", "--verb=get", "--resource=configmaps", "-n", ns)
	require.NoError(f.t, err, out)
	f.deleteWhenDone("role", ns, "sec-ops")
	out, err = f.as(teamAdmin, "create", "rolebinding", "sec-ops", "--role=sec-ops", "--user=carol", "-n", ns)
	require.NoError(f.t, err, out)
	f.deleteWhenDone("rolebinding", ns, "sec-ops")
	f.waitEvent(ns, "RoleBinding", "sec-ops", "ReferenceNotOwnedInCluster", "names Role sec-ops (roleRef), which in cluster "+member+" is not the federation's")
	_, err = mc.RbacV1().RoleBindings(ns).Get(context.Background(), "sec-ops", metav1.GetOptions{})
	assert.True(f.t, apierrors.IsNotFound(err), "no binding to the member's Role: %v", err)

	// The member's policy: even in a namespace the federation created.
	open := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "sec-open", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:unauthenticated"}},
	}
	_, err = f.asFederation().RbacV1().RoleBindings(ns).Create(context.Background(), open, metav1.CreateOptions{})
	refusedByPolicy(f.t, err, "system:")
}

// tenancyAdoptionPermission: edit in a namespace does not let a tenant
// take over the objects other teams keep there in the members.
func tenancyAdoptionPermission(f *fixture) {
	ns := tenantNamespace
	f.memberConfigMap(ns, "sec-theirs", "member")
	for _, annotation := range []string{
		federationv1beta1.ConflictResolutionAnnotation + ": adopt",
		federationv1beta1.DeleteAdoptedAnnotation + ": \"true\"",
	} {
		manifest := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sec-theirs\n  namespace: %s\n  annotations: {%s}\ndata: {owner: attacker}\n", ns, annotation)
		out, err := f.applyAs(tenant, manifest)
		f.refused(out, err, "configmaps/"+federationv1beta1.AdoptionSubresource)
	}
	// Without adoption it is a conflict, and the member's data stays.
	out, err := f.applyAs(tenant, configMap(ns, "sec-theirs", "owner: attacker"))
	require.NoError(f.t, err, out)
	f.deleteWhenDone("configmap", ns, "sec-theirs")
	f.waitEvent(ns, "ConfigMap", "sec-theirs", "ConflictInCluster", "was not created by this federation")
	assert.Equal(f.t, "member", f.memberData(ns, "sec-theirs"))

	// The admin holds the permission: the positive control.
	adopt := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sec-theirs\n  namespace: %s\n  annotations: {%s: adopt}\ndata: {owner: federation}\n",
		ns, federationv1beta1.ConflictResolutionAnnotation)
	out, err = f.applyAs("fed", adopt)
	require.NoError(f.t, err, out)
	require.NoError(f.t, poll.Until(context.Background(), converge, "the admin's adoption of sec-theirs", func(context.Context) error {
		if got := f.memberData(ns, "sec-theirs"); got != "federation" {
			return fmt.Errorf("owner %q", got)
		}
		return nil
	}))
}

// tenancyForeignNamespace: a member namespace of the same name as a
// federated one, which another team owns there, gets nothing of the
// federation's: not its objects, not an adoption, not a deletion.
func tenancyForeignNamespace(f *fixture) {
	const ns = "sec-payments"
	f.memberNamespace(ns, map[string]string{"team": "payments"})
	f.memberConfigMap(ns, "ledger", "member")
	f.t.Cleanup(func() { _, _ = f.as("fed", "delete", "namespace", ns, "--wait=false", "--ignore-not-found") })
	f.admin("create", "namespace", ns)
	f.waitEvent("", "Namespace", ns, "ConflictInCluster", "was not created by this federation")

	adopt := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ledger\n  namespace: %s\n  annotations: {%s: adopt, %s: \"true\"}\ndata: {owner: federation}\n",
		ns, federationv1beta1.ConflictResolutionAnnotation, federationv1beta1.DeleteAdoptedAnnotation)
	out, err := f.applyAs("fed", adopt)
	require.NoError(f.t, err, out)
	out, err = f.applyAs("fed", configMap(ns, "fresh", "owner: federation"))
	require.NoError(f.t, err, out)
	f.waitEvent(ns, "ConfigMap", "ledger", "NamespaceNotOwnedInCluster", "was neither created by federation fed nor adopted for it")
	f.waitEvent(ns, "ConfigMap", "fresh", "NamespaceNotOwnedInCluster", "nothing is written in it")
	assert.Equal(f.t, "member", f.memberData(ns, "ledger"))
	assert.Empty(f.t, f.memberData(ns, "fresh"))

	// Deleting asks for the adopted copies too: the member's ledger stays.
	f.admin("delete", "configmap", "ledger", "fresh", "-n", ns)
	assert.Equal(f.t, "member", f.memberData(ns, "ledger"))

	// The member's own Pod Security: the namespace has no labels, and the
	// federation's identity may not write in it at all.
	_, err = f.asFederation().CoreV1().ConfigMaps(ns).Create(context.Background(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "direct", Namespace: ns}}, metav1.CreateOptions{})
	refusedByPolicy(f.t, err, "may not write in namespace "+ns)
}

// tenancyHPATarget: an HPA aimed at a Deployment the federation did not
// make would scale it with the member's own rights.
func tenancyHPATarget(f *fixture) {
	ctx := context.Background()
	ns := tenantNamespace
	member := f.memberClient()
	theirs := deployment(ns, "sec-theirs", nil)
	theirs.Spec.Replicas = ptr.To[int32](3)
	_, err := member.AppsV1().Deployments(ns).Create(ctx, theirs, metav1.CreateOptions{})
	require.NoError(f.t, err)
	f.t.Cleanup(func() {
		_ = member.AppsV1().Deployments(ns).Delete(context.Background(), "sec-theirs", metav1.DeleteOptions{})
	})

	hpa := fmt.Sprintf(`apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: sec-scaler, namespace: %s}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: sec-theirs}
  minReplicas: 1
  maxReplicas: 1
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
`, ns)
	out, err := f.applyAs(tenant, hpa)
	require.NoError(f.t, err, out)
	f.deleteWhenDone("hpa", ns, "sec-scaler")
	require.NoError(f.t, poll.Until(ctx, converge, "the HPA's Propagated condition to name its target", func(context.Context) error {
		msg, err := f.as("fed", "get", "hpa", "sec-scaler", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="Propagated")].message}`)
		if err != nil {
			return fmt.Errorf("%v: %s", err, msg)
		}
		if !strings.Contains(msg, "is not the federation's") {
			return fmt.Errorf("Propagated says %q", msg)
		}
		return nil
	}))
	_, err = member.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "sec-scaler", metav1.GetOptions{})
	assert.True(f.t, apierrors.IsNotFound(err), "no HPA in the member: %v", err)
	got, err := member.AppsV1().Deployments(ns).Get(ctx, "sec-theirs", metav1.GetOptions{})
	require.NoError(f.t, err)
	assert.Equal(f.t, int32(3), *got.Spec.Replicas)
}

// tenancyMemberBaseline: the member's policy refuses, to the federation's
// identity, every pod template Pod Security baseline forbids, in a
// namespace it created that has no Pod Security labels. (It may not
// create Pods at all.)
func tenancyMemberBaseline(f *fixture) {
	ctx := context.Background()
	const ns = "sec-baseline"
	f.memberNamespace(ns, createdByFederation)
	deployments := f.asFederation().AppsV1().Deployments(ns)
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	for _, tt := range []struct {
		name, refused string
		edit          func(*corev1.PodSpec)
	}{
		{"host-port", "hostPort", func(s *corev1.PodSpec) {
			s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 22, HostPort: 22}}
		}},
		{"unconfined-seccomp", "seccompProfile type Unconfined", func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}}
		}},
		{"spc-t", "seLinuxOptions of a type other than", func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: "spc_t"}}
		}},
		{"unconfined-apparmor", "appArmorProfile type Unconfined", func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext = &corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}}
		}},
		{"unsafe-sysctl", "sysctls outside", func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.msgmax", Value: "65536"}}}
		}},
		{"unmasked-proc", "procMount other than Default", func(s *corev1.PodSpec) {
			s.HostUsers = ptr.To(false)
			s.Containers[0].SecurityContext = &corev1.SecurityContext{ProcMount: ptr.To(corev1.UnmaskedProcMount)}
		}},
	} {
		_, err := deployments.Create(ctx, deployment(ns, tt.name, tt.edit), dryRun)
		refusedByPolicy(f.t, err, tt.refused)
	}
	_, err := deployments.Create(ctx, deployment(ns, "plain", nil), dryRun)
	assert.NoError(f.t, err, "a plain Deployment is the federation's ordinary work")

	// The AppArmor annotation of a pod template, as before the field.
	annotated := deployment(ns, "annotated-apparmor", nil)
	annotated.Spec.Template.Annotations = map[string]string{"container.apparmor.security.beta.kubernetes.io/c": "unconfined"}
	_, err = deployments.Create(ctx, annotated, dryRun)
	refusedByPolicy(f.t, err, "container.apparmor.security.beta.kubernetes.io")
}

// tenancyExternalIPs: a Service's externalIPs take over traffic to those
// addresses in every member (CVE-2020-8554).
func tenancyExternalIPs(f *fixture) {
	for _, ip := range []string{"8.8.8.8", "10.96.0.1"} {
		manifest := fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: sec-mitm, namespace: %s}\nspec:\n  ports: [{port: 443}]\n  externalIPs: [%s]\n", tenantNamespace, ip)
		out, err := f.applyAs(tenant, manifest)
		f.refused(out, err, "spec.externalIPs[0]")
	}
}

// tenancyServiceAccounts: a pod's service account naming an account the
// federation does not propagate would run as the member's account of that
// name in the tenant's namespace; a token Secret never reaches a member.
func tenancyServiceAccounts(f *fixture) {
	ctx := context.Background()
	ns := tenantNamespace
	mc := f.memberClient()
	_, err := mc.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sec-deployer"}}, metav1.CreateOptions{})
	require.NoError(f.t, err)
	f.t.Cleanup(func() {
		_ = mc.CoreV1().ServiceAccounts(ns).Delete(context.Background(), "sec-deployer", metav1.DeleteOptions{})
	})

	for _, account := range []string{"sec-deployer", "sec-nobody"} {
		token := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: sec-token-%s\n  namespace: %s\n  annotations: {kubernetes.io/service-account.name: %s}\ntype: kubernetes.io/service-account-token\n",
			account, ns, account)
		// Token Secrets stay at the federation (they hold its own
		// tokens); as on a cluster, one naming an account that does not
		// exist there is deleted, and no member ever sees it.
		out, err := f.applyAs(tenant, token)
		require.NoError(f.t, err, out)
		require.NoError(f.t, poll.Until(ctx, converge, "the token Secret of "+account+", which has no account at the federation, to go", func(ctx context.Context) error {
			out, err := f.as("fed", "get", "secret", "sec-token-"+account, "-n", ns, "-o", "name")
			if err != nil && strings.Contains(err.Error(), "NotFound") {
				return nil
			}
			return fmt.Errorf("still there: %s %v", out, err)
		}))
		_, err = mc.CoreV1().Secrets(ns).Get(ctx, "sec-token-"+account, metav1.GetOptions{})
		assert.True(f.t, apierrors.IsNotFound(err), "the member has no sec-token-%s: %v", account, err)
		out, err = f.applyAs(tenant, workloadManifest(ns, "sec-runs-as-"+account, "", "      serviceAccountName: "+account+"\n"))
		f.refused(out, err, "serviceAccountName")
	}

	// An account of the member's own name made at the federation too:
	// admission lets it be named, but in the member the name is the
	// member's account, so nothing naming it is written there.
	out, err := f.as(tenant, "create", "serviceaccount", "sec-deployer", "-n", ns)
	require.NoError(f.t, err, out)
	f.deleteWhenDone("serviceaccount", ns, "sec-deployer")
	out, err = f.applyAs(tenant, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: sec-token-deployer\n  namespace: %s\n  annotations: {kubernetes.io/service-account.name: sec-deployer}\ntype: kubernetes.io/service-account-token\n", ns))
	require.NoError(f.t, err, out)
	f.deleteWhenDone("secret", ns, "sec-token-deployer")
	out, err = f.applyAs(tenant, workloadManifest(ns, "sec-runs-as-deployer", "", "      serviceAccountName: sec-deployer\n"))
	require.NoError(f.t, err, out)
	f.deleteWhenDone("deployment", ns, "sec-runs-as-deployer")
	f.waitEvent(ns, "ServiceAccount", "sec-deployer", "ConflictInCluster", "was not created by this federation")
	// The token Secret is never propagated at all (it holds the
	// federation's own token): checked below, no member has it.
	require.NoError(f.t, poll.Until(ctx, converge, "the Deployment's Propagated condition to name the member's account", func(context.Context) error {
		msg, err := f.as("fed", "get", "deployment", "sec-runs-as-deployer", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="Propagated")].message}`)
		if err != nil {
			return fmt.Errorf("%v: %s", err, msg)
		}
		if !strings.Contains(msg, "names ServiceAccount sec-deployer (spec.template.spec.serviceAccountName), which in cluster "+member+" is not the federation's") {
			return fmt.Errorf("Propagated says %q", msg)
		}
		return nil
	}))
	_, err = mc.CoreV1().Secrets(ns).Get(ctx, "sec-token-deployer", metav1.GetOptions{})
	assert.True(f.t, apierrors.IsNotFound(err), "no token minted for the member's account: %v", err)
	_, err = mc.AppsV1().Deployments(ns).Get(ctx, "sec-runs-as-deployer", metav1.GetOptions{})
	assert.True(f.t, apierrors.IsNotFound(err), "nothing runs as the member's account: %v", err)

	// The federation's own account: both go.
	out, err = f.as(tenant, "create", "serviceaccount", "sec-builder", "-n", ns)
	require.NoError(f.t, err, out)
	f.deleteWhenDone("serviceaccount", ns, "sec-builder")
	out, err = f.applyAs(tenant, workloadManifest(ns, "sec-runs-as-builder", "", "      serviceAccountName: sec-builder\n"))
	require.NoError(f.t, err, out)
	f.deleteWhenDone("deployment", ns, "sec-runs-as-builder")
}

// tenancyQuota: a ResourceQuota at the federation holds there, before
// anything reaches a member.
func tenancyQuota(f *fixture) {
	const ns = "sec-quota"
	f.t.Cleanup(func() { _, _ = f.as("fed", "delete", "namespace", ns, "--wait=false", "--ignore-not-found") })
	f.admin("create", "namespace", ns)
	f.admin("create", "quota", "sec-configmaps", "--hard=count/configmaps=2", "-n", ns)
	counted := corev1.ResourceName("count/configmaps")
	require.NoError(f.t, poll.Until(context.Background(), converge, "the quota's status at the federation", func(context.Context) error {
		out, err := f.as("fed", "get", "quota", "sec-configmaps", "-n", ns, "-o", "json")
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		var quota corev1.ResourceQuota
		if err := json.Unmarshal([]byte(out), &quota); err != nil {
			return err
		}
		hard, used := quota.Status.Hard[counted], quota.Status.Used[counted]
		if hard.Value() != 2 || used.String() != "0" {
			return fmt.Errorf("hard %s, used %s", hard.String(), used.String())
		}
		return nil
	}))
	for i := range 2 {
		out, err := f.applyAs("fed", configMap(ns, fmt.Sprintf("sec-%d", i), "k: v"))
		require.NoError(f.t, err, out)
	}
	out, err := f.applyAs("fed", configMap(ns, "sec-2", "k: v"))
	f.refused(out, err, "exceeded quota")
}

// tenancyOverrides: a per-cluster override would otherwise set, in one
// cluster's copy, what admission checked on the object itself; and rules
// that each double the object would exhaust the apiserver and the
// controller manager.
func tenancyOverrides(f *fixture) {
	ns := tenantNamespace
	overrides := func(rules string) string {
		return "    " + federationv1beta1.OverridesAnnotation + ": '" + rules + "'\n"
	}
	for _, tt := range []struct {
		what, manifest, field string
	}{
		{"a pod's service account", workloadManifest(ns, "sec-ov-sa", "  annotations:\n"+
			overrides(`[{"patches":[{"op":"add","path":"/spec/template/spec/serviceAccountName","value":"sec-deployer"}]}]`), ""),
			"spec.template.spec.serviceAccountName"},
		{"a Service's externalIPs", fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: sec-ov-ips\n  namespace: %s\n  annotations:\n%sspec:\n  ports: [{port: 443}]\n",
			ns, overrides(`[{"patches":[{"op":"add","path":"/spec/externalIPs","value":["8.8.8.8"]}]}]`)), "spec.externalIPs"},
		{"a Secret's type", fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: sec-ov-token\n  namespace: %s\n  annotations:\n%s",
			ns, overrides(`[{"patches":[{"op":"replace","path":"/type","value":"kubernetes.io/service-account-token"}]}]`)), "type"},
	} {
		out, err := f.applyAs(tenant, tt.manifest)
		f.refused(out, err, "an override may not change "+tt.field)
	}

	// Each rule doubles the object: refused at the limit, quickly.
	var rules []string
	for i := range 20 {
		rules = append(rules, fmt.Sprintf(`{"patches":[{"op":"copy","from":"/spec/template","path":"/spec/template/metadata/labels/x%d"}]}`, i))
	}
	start := time.Now()
	out, err := f.applyAs(tenant, workloadManifest(ns, "sec-ov-boom", "  annotations:\n"+overrides("["+strings.Join(rules, ",")+"]"), ""))
	f.refused(out, err, "over the limit")
	f.t.Logf("20 doubling rules refused in %s", time.Since(start).Round(time.Millisecond))
}

// referenceNotOurs is the reason of the event on a federated object whose
// copy names a member object that is not the federation's there.
const referenceNotOurs = "ReferenceNotOwnedInCluster"

// federationName is the federation's name (kubefed init fed), the value of
// federationv1beta1.FederationLabel on its copies.
const federationName = "fed"

// memberResources are the member resources of the kinds the reference and
// selector attacks read and write there.
var memberResources = map[string]schema.GroupVersionResource{
	"ConfigMap":             {Version: "v1", Resource: "configmaps"},
	"Secret":                {Version: "v1", Resource: "secrets"},
	"PersistentVolumeClaim": {Version: "v1", Resource: "persistentvolumeclaims"},
	"ServiceAccount":        {Version: "v1", Resource: "serviceaccounts"},
	"Service":               {Version: "v1", Resource: "services"},
	"Pod":                   {Version: "v1", Resource: "pods"},
	"Deployment":            {Group: "apps", Version: "v1", Resource: "deployments"},
	"ReplicaSet":            {Group: "apps", Version: "v1", Resource: "replicasets"},
	"DaemonSet":             {Group: "apps", Version: "v1", Resource: "daemonsets"},
	"StatefulSet":           {Group: "apps", Version: "v1", Resource: "statefulsets"},
	"NetworkPolicy":         {Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"},
	"PodDisruptionBudget":   {Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"},
}

// object parses a manifest (YAML or JSON).
func (f *fixture) object(manifest string) *unstructured.Unstructured {
	f.t.Helper()
	obj := &unstructured.Unstructured{}
	require.NoError(f.t, yaml.Unmarshal([]byte(manifest), &obj.Object), manifest)
	return obj
}

// inMember is the member admin's client of the objects of kind in ns, not
// rate limited (it polls).
func (f *fixture) inMember(kind, ns string) dynamic.ResourceInterface {
	f.t.Helper()
	gvr, ok := memberResources[kind]
	require.True(f.t, ok, "no member resource for kind %s", kind)
	client, err := f.env.Clients(func(c *rest.Config) { c.QPS = -1 }).Dynamic(member)
	require.NoError(f.t, err)
	return client.Resource(gvr).Namespace(ns)
}

// memberOwns creates manifest's object in the member as its admin (the
// member's own, outside the federation), removed when the test ends.
func (f *fixture) memberOwns(manifest string) {
	f.t.Helper()
	obj := f.object(manifest)
	objects := f.inMember(obj.GetKind(), obj.GetNamespace())
	_, err := objects.Create(context.Background(), obj, metav1.CreateOptions{})
	require.NoError(f.t, err)
	f.t.Cleanup(func() { _ = objects.Delete(context.Background(), obj.GetName(), metav1.DeleteOptions{}) })
}

// tenantApplies applies manifest as the tenant at the federation; its
// object is deleted when the test ends.
func (f *fixture) tenantApplies(manifest string) {
	f.t.Helper()
	obj := f.object(manifest)
	f.deleteWhenDone(strings.ToLower(obj.GetKind()), obj.GetNamespace(), obj.GetName())
	out, err := f.applyAs(tenant, manifest)
	require.NoError(f.t, err, out)
}

// waitMember waits until the member holds kind ns/name and check (unless
// nil) passes on it.
func (f *fixture) waitMember(kind, ns, name string, check func(*unstructured.Unstructured) error) {
	f.t.Helper()
	objects := f.inMember(kind, ns)
	require.NoError(f.t, poll.Until(context.Background(), converge, fmt.Sprintf("%s %s/%s in %s", kind, ns, name, member), func(ctx context.Context) error {
		obj, err := objects.Get(ctx, name, metav1.GetOptions{})
		if err != nil || check == nil {
			return err
		}
		return check(obj)
	}))
}

// waitMemberGone waits until the member holds no kind ns/name.
func (f *fixture) waitMemberGone(kind, ns, name string) {
	f.t.Helper()
	objects := f.inMember(kind, ns)
	require.NoError(f.t, poll.Until(context.Background(), converge, fmt.Sprintf("%s %s/%s gone from %s", kind, ns, name, member), func(ctx context.Context) error {
		_, err := objects.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		return errors.New("still there")
	}))
}

// notCopied waits for the referenceNotOurs event on the federated kind
// ns/name saying want, and asserts that the member holds no copy of it.
func (f *fixture) notCopied(kind, ns, name, want string) {
	f.t.Helper()
	f.waitEvent(ns, kind, name, referenceNotOurs, want)
	_, err := f.inMember(kind, ns).Get(context.Background(), name, metav1.GetOptions{})
	assert.True(f.t, apierrors.IsNotFound(err), "no %s %s/%s in the member: %v", kind, ns, name, err)
}

// part runs check as a subtest of its own, so that each part of an attack
// reports apart.
func (f *fixture) part(name string, check func(*fixture)) {
	f.t.Run(name, func(t *testing.T) { check(f.in(t)) })
}

// deploymentManifest is the manifest of deployment(ns, name, edit).
func deploymentManifest(f *fixture, ns, name string, edit func(*corev1.PodSpec)) string {
	d := deployment(ns, name, edit)
	d.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
	return manifestJSON(f, d)
}

// podWorkload is an apps/v1 workload of kind of pause pods labelled
// app=app, with extra spec lines (indented two spaces).
func podWorkload(kind, ns, name, app, spec string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: %s
metadata: {name: %s, namespace: %s}
spec:
%s  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %[5]s}}
    spec:
      containers: [{name: c, image: registry.k8s.io/pause:3.10}]
`, kind, name, ns, spec, app)
}

// claim is a PersistentVolumeClaim manifest of 1Gi with extra spec lines
// (indented two spaces).
func claim(ns, name, spec string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s, namespace: %s}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n%s", name, ns, spec)
}

// tenancyPodReferences: a namespace the federation created in a member may
// hold the member's own Secrets, ConfigMaps and claims; the member resolves
// the names a pod template gives with its own rights, so a tenant's pods
// would mount, read or pull with another team's.
func tenancyPodReferences(f *fixture) {
	ns := tenantNamespace
	f.memberOwns(fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: db-root, namespace: %s}\nstringData: {password: member}\n", ns))
	f.memberOwns(configMap(ns, "other-config", "owner: member"))
	f.memberOwns(claim(ns, "other-data", ""))
	secretVolume := func(name string) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}}}
		}
	}
	uses := []struct {
		name, names string
		edit        func(*corev1.PodSpec)
	}{
		{"sec-mounts-db-root", "Secret db-root", secretVolume("db-root")},
		{"sec-env-other-config", "ConfigMap other-config", func(s *corev1.PodSpec) {
			s.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "other-config"}}}}
		}},
		{"sec-pulls-db-root", "Secret db-root", func(s *corev1.PodSpec) {
			s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "db-root"}}
		}},
		{"sec-mounts-other-data", "PersistentVolumeClaim other-data", func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "other-data"}}}}
		}},
	}
	for _, u := range uses {
		f.tenantApplies(deploymentManifest(f, ns, u.name, u.edit))
	}
	for _, u := range uses {
		f.part(u.name, func(f *fixture) { f.notCopied("Deployment", ns, u.name, "names "+u.names) })
	}

	// The federation's own Secret: the Deployment mounting it goes.
	out, err := f.as(tenant, "create", "secret", "generic", "mine", "--from-literal=k=v", "-n", ns)
	require.NoError(f.t, err, out)
	f.deleteWhenDone("secret", ns, "mine")
	f.tenantApplies(deploymentManifest(f, ns, "sec-mounts-mine", secretVolume("mine")))
	f.waitMember("Deployment", ns, "sec-mounts-mine", nil)
}

// tenancyClaims: a claim naming a PersistentVolume, or made from a
// snapshot or another claim, would take the member's volume of that name;
// and a StatefulSet's pods would bind the claims of its templates' names
// that the member already holds.
func tenancyClaims(f *fixture) {
	ns := tenantNamespace
	for _, tt := range []struct{ name, spec, field string }{
		{"sec-names-pv", "  volumeName: some-pv\n", "spec.volumeName"},
		{"sec-picks-pv", "  selector: {matchLabels: {team: b}}\n", "spec.selector"},
		{"sec-from-snapshot", "  dataSource: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: nightly}\n", "spec.dataSource"},
	} {
		f.part(tt.name, func(f *fixture) {
			f.deleteWhenDone("persistentvolumeclaim", ns, tt.name)
			out, err := f.applyAs(tenant, claim(ns, tt.name, tt.spec))
			f.refused(out, err, tt.field)
		})
	}
	f.part("sec-from-other-volume", func(f *fixture) {
		f.memberOwns(claim(ns, "other-volume", ""))
		f.tenantApplies(claim(ns, "sec-from-other-volume", "  dataSource: {kind: PersistentVolumeClaim, name: other-volume}\n"))
		f.notCopied("PersistentVolumeClaim", ns, "sec-from-other-volume", "names PersistentVolumeClaim other-volume")
	})
	// A claim the member makes after the copy was written, of the name the
	// next ordinal would use.
	f.part("web-later", func(f *fixture) {
		f.tenantApplies(podWorkload("StatefulSet", ns, "web-later", "web-later", "  serviceName: web-later\n  replicas: 0\n"+
			"  volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}]\n"))
		f.waitMember("StatefulSet", ns, "web-later", nil)
		f.memberOwns(claim(ns, "data-web-later-1", ""))
		f.waitMemberGone("StatefulSet", ns, "web-later")
		f.waitEvent(ns, "StatefulSet", "web-later", referenceNotOurs, "PersistentVolumeClaim data-web-later-1")
	})
	f.part("db", func(f *fixture) {
		f.memberOwns(claim(ns, "data-db-0", ""))
		f.tenantApplies(podWorkload("StatefulSet", ns, "db", "db", "  serviceName: db\n"+
			"  volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}]\n"))
		f.notCopied("StatefulSet", ns, "db", "PersistentVolumeClaim data-db-0")
	})
}

// tenancyReferenceGoes: once the federation's copy of what a copy names
// leaves a member, the name there is free for the member's own object, and
// the copy would act through it: the copy goes, and is not written again
// while the name is another's.
func tenancyReferenceGoes(f *fixture) {
	ns := tenantNamespace
	out, err := f.as(tenant, "create", "serviceaccount", "runner", "-n", ns)
	require.NoError(f.t, err, out)
	f.deleteWhenDone("serviceaccount", ns, "runner")
	f.tenantApplies(deploymentManifest(f, ns, "uses-runner", func(s *corev1.PodSpec) { s.ServiceAccountName = "runner" }))
	f.waitMember("ServiceAccount", ns, "runner", nil)
	f.waitMember("Deployment", ns, "uses-runner", nil)

	out, err = f.as(tenant, "delete", "serviceaccount", "runner", "-n", ns)
	require.NoError(f.t, err, out)
	f.waitMemberGone("ServiceAccount", ns, "runner")
	f.waitMemberGone("Deployment", ns, "uses-runner")
	f.waitEvent(ns, "Deployment", "uses-runner", referenceNotOurs, "names ServiceAccount runner")

	// The member's own account of the name, then any change of the
	// Deployment: still not written.
	f.memberOwns(fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: runner, namespace: %s}\n", ns))
	out, err = f.as(tenant, "annotate", "deployment", "uses-runner", "touch=1", "--overwrite", "-n", ns)
	require.NoError(f.t, err, out)
	f.notCopied("Deployment", ns, "uses-runner", "names ServiceAccount runner (spec.template.spec.serviceAccountName), which in cluster "+member+" is not the federation's")
}

// tenancySelectors: a member copy's selector picks pods by labels, and the
// member's own pods may carry the same: a Service would expose them, a
// NetworkPolicy open them, a PDB pin them, a workload adopt them. Member
// copies select only pods of the federation (FederationLabel); the
// federated objects keep their selectors as written.
func tenancySelectors(f *fixture) {
	ctx := context.Background()
	ns := tenantNamespace
	// Before the copies, so that any of them could adopt it.
	f.memberOwns(fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: sec-stray-web, namespace: %s, labels: {app: web}}\n"+
		"spec:\n  containers: [{name: c, image: registry.k8s.io/pause:3.10}]\n", ns))
	selector, template := []string{"spec", "selector", "matchLabels"}, []string{"spec", "template", "metadata", "labels"}
	selecting := []struct {
		kind, manifest string
		// paths are the label maps that must ask for FederationLabel;
		// the first is the selector.
		paths [][]string
	}{
		{"Service", fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: %s}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n", ns),
			[][]string{{"spec", "selector"}}},
		{"NetworkPolicy", fmt.Sprintf("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: web, namespace: %s}\nspec:\n  podSelector: {matchLabels: {app: web}}\n  policyTypes: [Ingress]\n", ns),
			[][]string{{"spec", "podSelector", "matchLabels"}}},
		{"PodDisruptionBudget", fmt.Sprintf("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: %s}\nspec:\n  minAvailable: 1\n  selector: {matchLabels: {app: web}}\n", ns),
			[][]string{selector}},
		{"Deployment", podWorkload("Deployment", ns, "web", "web", ""), [][]string{selector, template}},
		{"DaemonSet", podWorkload("DaemonSet", ns, "web", "web", ""), [][]string{selector, template}},
		{"ReplicaSet", podWorkload("ReplicaSet", ns, "web", "web", "  replicas: 0\n"), [][]string{selector, template}},
	}
	for _, s := range selecting {
		f.tenantApplies(s.manifest)
	}
	ours := k8slabels.SelectorFromSet(k8slabels.Set{"app": "web", federationv1beta1.FederationLabel: federationName})
	assert.NoError(f.t, poll.Until(ctx, converge, "the member copies to select only the federation's pods", func(ctx context.Context) error {
		var wrong []error
		for _, s := range selecting {
			obj, err := f.inMember(s.kind, ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				wrong = append(wrong, err)
				continue
			}
			for _, path := range s.paths {
				if got, _, _ := unstructured.NestedStringMap(obj.Object, path...); !ours.Matches(k8slabels.Set(got)) {
					wrong = append(wrong, fmt.Errorf("%s .%s is %v", s.kind, strings.Join(path, "."), got))
				}
			}
		}
		return errors.Join(wrong...)
	}))
	for _, s := range selecting {
		out, err := f.as(tenant, "get", strings.ToLower(s.kind), "web", "-n", ns, "-o", "json")
		require.NoError(f.t, err, out)
		got, _, _ := unstructured.NestedStringMap(f.object(out).Object, s.paths[0]...)
		assert.Equal(f.t, map[string]string{"app": "web"}, got, "the federated %s's selector, as written", s.kind)
	}

	// The member runs its controllers (kube-controller-manager, kwok
	// nodes): once its ReplicaSet controller has synced the copy, the
	// member's own pod would be adopted and, at 0 replicas, deleted.
	f.waitMember("ReplicaSet", ns, "web", func(rs *unstructured.Unstructured) error {
		if observed, _, _ := unstructured.NestedInt64(rs.Object, "status", "observedGeneration"); observed < rs.GetGeneration() {
			return fmt.Errorf("observed generation %d of %d", observed, rs.GetGeneration())
		}
		return nil
	})
	pod, err := f.inMember("Pod", ns).Get(ctx, "sec-stray-web", metav1.GetOptions{})
	require.NoError(f.t, err, "the member's own pod is still there")
	assert.Empty(f.t, pod.GetOwnerReferences(), "the member's own pod is adopted by none of the federation's copies")
}

// tenancyOptionalReferences: an optional reference does not hold a copy
// back while absent, and our caches hold only the federation's copies, so
// the member's own object of that name made afterwards (the federation's
// went, or there never was one) is found by the live re-check
// (--optional-reference-recheck, short in this fixture): the copy goes.
func tenancyOptionalReferences(f *fixture) {
	ns := tenantNamespace
	out, err := f.as(tenant, "create", "secret", "generic", "opt-settings", "--from-literal=k=v", "-n", ns)
	require.NoError(f.t, err, out)
	f.deleteWhenDone("secret", ns, "opt-settings")
	optional := true
	f.tenantApplies(deploymentManifest(f, ns, "uses-opt-settings", func(s *corev1.PodSpec) {
		s.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "opt-settings"}, Optional: &optional}}}
	}))
	f.tenantApplies(deploymentManifest(f, ns, "uses-opt-later", func(s *corev1.PodSpec) {
		s.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "opt-later"}, Optional: &optional}}}}
	}))
	f.waitMember("Secret", ns, "opt-settings", nil)
	f.waitMember("Deployment", ns, "uses-opt-settings", nil)
	f.waitMember("Deployment", ns, "uses-opt-later", nil)

	f.part("the federation's went first", func(f *fixture) {
		out, err := f.as(tenant, "delete", "secret", "opt-settings", "-n", ns)
		require.NoError(f.t, err, out)
		f.waitMemberGone("Secret", ns, "opt-settings")
		f.memberOwns(fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: opt-settings, namespace: %s}\nstringData: {password: member}\n", ns))
		f.waitMemberGone("Deployment", ns, "uses-opt-settings")
		f.waitEvent(ns, "Deployment", "uses-opt-settings", referenceNotOurs, "names Secret opt-settings")
	})
	f.part("there never was one", func(f *fixture) {
		f.memberOwns(configMap(ns, "opt-later", "owner: member"))
		f.waitMemberGone("Deployment", ns, "uses-opt-later")
		f.waitEvent(ns, "Deployment", "uses-opt-later", referenceNotOurs, "names ConfigMap opt-later")
	})
	// Another federation of our name on the member: its object carries our
	// name label, with its own UID; it is another's all the same.
	f.part("another federation of our name", func(f *fixture) {
		f.tenantApplies(deploymentManifest(f, ns, "uses-opt-namesake", func(s *corev1.PodSpec) {
			s.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "opt-namesake"}, Optional: &optional}}}
		}))
		f.waitMember("Deployment", ns, "uses-opt-namesake", nil)
		f.memberOwns(fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: opt-namesake, namespace: %s, labels: {%s: %s, %s: 11111111-2222-3333-4444-555555555555}}\n"+
			"stringData: {password: namesake}\n", ns, federationv1beta1.FederationLabel, federationName, federationv1beta1.FederationUIDLabel))
		f.waitMemberGone("Deployment", ns, "uses-opt-namesake")
		f.waitEvent(ns, "Deployment", "uses-opt-namesake", referenceNotOurs, "names Secret opt-namesake")
	})
	// Copies naming many optional names do not crowd one out: the check
	// lists the member's objects of the namespace, whatever their number.
	f.part("among many names", func(f *fixture) {
		for i := range 3 {
			f.tenantApplies(deploymentManifest(f, ns, fmt.Sprintf("opt-crowd-%d", i), func(s *corev1.PodSpec) {
				for j := range federatedtypes.MaxReferences {
					s.Containers[0].EnvFrom = append(s.Containers[0].EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: fmt.Sprintf("absent-%d-%d", i, j)}, Optional: &optional}})
				}
			}))
		}
		f.tenantApplies(deploymentManifest(f, ns, "uses-opt-crowd", func(s *corev1.PodSpec) {
			s.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "opt-crowd"}, Optional: &optional}}}
		}))
		for i := range 3 {
			f.waitMember("Deployment", ns, fmt.Sprintf("opt-crowd-%d", i), nil)
		}
		f.waitMember("Deployment", ns, "uses-opt-crowd", nil)
		f.memberOwns(fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: opt-crowd, namespace: %s}\nstringData: {password: member}\n", ns))
		f.waitMemberGone("Deployment", ns, "uses-opt-crowd")
		f.waitEvent(ns, "Deployment", "uses-opt-crowd", referenceNotOurs, "names Secret opt-crowd")
	})
}

// tenancyMemberNames: a pod's devices (ResourceClaims), its PodGroup and
// an ExternalName of another namespace would, in each member, be that
// cluster's own objects of those names; the federation propagates none
// of them (422). An ExternalName of the copy's own namespace is a
// reference like any.
func tenancyMemberNames(f *fixture) {
	ns := tenantNamespace
	for _, tt := range []struct{ name, manifest, field string }{
		{"sec-claims-gpu", podWorkload("Deployment", ns, "sec-claims-gpu", "gpu", "") +
			"      resourceClaims: [{name: gpu, resourceClaimName: team-b-gpu}]\n", "spec.template.spec.resourceClaims[0].resourceClaimName"},
		{"sec-alias-payments", fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: sec-alias-payments, namespace: %s}\n"+
			"spec: {type: ExternalName, externalName: payments.%s.svc.cluster.local}\n", ns, teamAdminNamespace), "spec.externalName"},
		// A relative NAME, which each reader's search path completes in its
		// own namespace (an ingress controller's, say).
		{"sec-alias-bare", fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: sec-alias-bare, namespace: %s}\n"+
			"spec: {type: ExternalName, externalName: payments}\n", ns), "is one label"},
	} {
		f.part(tt.name, func(f *fixture) {
			obj := f.object(tt.manifest)
			f.deleteWhenDone(strings.ToLower(obj.GetKind()), ns, tt.name)
			out, err := f.applyAs(tenant, tt.manifest)
			f.refused(out, err, tt.field)
		})
	}
	f.part("sec-alias-other", func(f *fixture) {
		f.memberOwns(fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: other-svc, namespace: %s}\nspec: {ports: [{port: 80}]}\n", ns))
		f.tenantApplies(fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: sec-alias-other, namespace: %s}\n"+
			"spec: {type: ExternalName, externalName: other-svc.%s.svc.cluster.local}\n", ns, ns))
		f.notCopied("Service", ns, "sec-alias-other", "names Service other-svc (spec.externalName)")
	})
}
