package kubefed

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/memberrbac"
)

func TestMemberPolicyObjects(t *testing.T) {
	a := newMemberAccess("fed")
	p, b := a.Policy, a.PolicyBinding
	assert.Equal(t, "federation-fed", p.Name, "named after the federation")
	assert.Equal(t, "fed", p.Labels[federationv1beta1.FederationLabel])
	assert.Equal(t, "ValidatingAdmissionPolicy", p.Kind)
	assert.Equal(t, "admissionregistration.k8s.io/v1", p.APIVersion)
	assert.Equal(t, admissionregistrationv1.Fail, *p.Spec.FailurePolicy)
	require.Len(t, p.Spec.MatchConditions, 1)
	assert.Equal(t, `request.userInfo.username == "system:serviceaccount:federation-system:federation-fed"`, p.Spec.MatchConditions[0].Expression,
		"bound to the account join creates")
	assert.Equal(t, "system:serviceaccount:"+a.Account.Namespace+":"+a.Account.Name, accountUsername(a.Account.Namespace, a.Account.Name))
	for _, v := range p.Spec.Validations {
		assert.Equal(t, metav1.StatusReasonForbidden, *v.Reason)
		assert.Contains(t, v.Message, `federation "fed" may not `)
	}

	assert.Equal(t, "federation-fed", b.Name)
	assert.Equal(t, "ValidatingAdmissionPolicyBinding", b.Kind)
	assert.Equal(t, p.Name, b.Spec.PolicyName)
	assert.Equal(t, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}, b.Spec.ValidationActions)
	assert.Nil(t, b.Spec.ParamRef)

	other := newMemberAccess("other")
	assert.NotEqual(t, p.Name, other.Policy.Name, "two federations in one member do not clash")
	assert.Contains(t, other.Policy.Spec.MatchConditions[0].Expression, "federation-other\"")
}

// The federation's rights in a member give it no way to lift the policy
// or to widen them.
func TestMemberRulesCannotTouchThePolicy(t *testing.T) {
	// (Its RBAC rights are only memberrbac.JoinRules: TestJoinRBACRules.)
	for _, r := range memberRules {
		for _, g := range r.APIGroups {
			assert.NotEqual(t, "admissionregistration.k8s.io", g)
			assert.NotEqual(t, "rbac.authorization.k8s.io", g)
			assert.NotEqual(t, "*", g)
		}
		assert.NotContains(t, r.Verbs, "escalate")
		assert.NotContains(t, r.Verbs, "bind")
		assert.NotContains(t, r.Verbs, "impersonate")
	}
}

// request is one admission request the policy is tried on.
type request struct {
	name      string
	user      string
	op        admission.Operation
	resource  schema.GroupVersionResource
	sub       string
	kind      string
	namespace string
	objName   string
	obj, old  runtime.Object
	// refused is what the message must say; "" when allowed.
	refused string
}

func TestMemberPolicyDecisions(t *testing.T) {
	a := newMemberAccess("fed")
	fedUser := accountUsername(a.Account.Namespace, a.Account.Name)
	v := compile(t, a.Policy)

	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	daemonSets := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	replicaSets := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	jobs := schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	cronJobs := schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}
	statefulSets := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}

	create := func(name string, gvr schema.GroupVersionResource, kind, ns string, obj runtime.Object, refused string) request {
		return request{name: name, user: fedUser, op: admission.Create, resource: gvr, kind: kind, namespace: ns, objName: "x", obj: obj, refused: refused}
	}
	podSpec := func(edit func(*corev1.PodSpec)) corev1.PodSpec {
		s := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}
		if edit != nil {
			edit(&s)
		}
		return s
	}
	deployment := func(edit func(*corev1.PodSpec)) *appsv1.Deployment {
		return &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: podSpec(edit)}}}
	}
	hostPath := func(s *corev1.PodSpec) {
		s.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
	}
	privileged := &corev1.SecurityContext{Privileged: ptr.To(true)}
	caps := func(c ...corev1.Capability) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: c}}
		}
	}

	for _, r := range []request{
		create("a ConfigMap in kube-system", configMaps, "ConfigMap", "kube-system", cm, `federation "fed" may not write to namespace kube-system`),
		create("a ConfigMap in kube-public", configMaps, "ConfigMap", "kube-public", cm, "namespace kube-public"),
		create("a ConfigMap in kube-node-lease", configMaps, "ConfigMap", "kube-node-lease", cm, "namespace kube-node-lease"),
		create("a ConfigMap in federation-system", configMaps, "ConfigMap", "federation-system", cm, "namespace federation-system"),
		create("a ConfigMap in a tenant's namespace", configMaps, "ConfigMap", "team-a", cm, ""),
		{name: "deleting a ConfigMap in kube-system", user: fedUser, op: admission.Delete, resource: configMaps, kind: "ConfigMap",
			namespace: "kube-system", objName: "x", old: cm, refused: "namespace kube-system"},
		{name: "deleting a ConfigMap in a tenant's namespace", user: fedUser, op: admission.Delete, resource: configMaps, kind: "ConfigMap",
			namespace: "team-a", objName: "x", old: cm},
		{name: "labelling the Namespace kube-system", user: fedUser, op: admission.Update, resource: namespaces, kind: "Namespace",
			objName: "kube-system", obj: &corev1.Namespace{}, old: &corev1.Namespace{}, refused: "namespace kube-system"},
		create("a tenant's Namespace", namespaces, "Namespace", "", &corev1.Namespace{}, ""),
		{name: "a member admin in kube-system", user: "admin", op: admission.Create, resource: deployments, kind: "Deployment",
			namespace: "kube-system", objName: "x", obj: deployment(hostPath)},

		create("a plain Deployment", deployments, "Deployment", "team-a", deployment(nil), ""),
		create("a Deployment with hostNetwork", deployments, "Deployment", "team-a", deployment(func(s *corev1.PodSpec) { s.HostNetwork = true }), "hostNetwork"),
		create("a Deployment with hostPID", deployments, "Deployment", "team-a", deployment(func(s *corev1.PodSpec) { s.HostPID = true }), "hostPID"),
		create("a Deployment with hostIPC", deployments, "Deployment", "team-a", deployment(func(s *corev1.PodSpec) { s.HostIPC = true }), "hostIPC"),
		create("a Deployment with a hostPath", deployments, "Deployment", "team-a", deployment(hostPath), "hostPath volumes"),
		create("a privileged container", deployments, "Deployment", "team-a", deployment(func(s *corev1.PodSpec) { s.Containers[0].SecurityContext = privileged }),
			"privileged containers"),
		create("a privileged init container", deployments, "Deployment", "team-a", deployment(func(s *corev1.PodSpec) {
			s.InitContainers = []corev1.Container{{Name: "i", Image: "i", SecurityContext: privileged}}
		}), "privileged containers"),
		create("a container not privileged", deployments, "Deployment", "team-a",
			deployment(func(s *corev1.PodSpec) {
				s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(false)}
			}), ""),
		create("SYS_ADMIN", deployments, "Deployment", "team-a", deployment(caps("NET_BIND_SERVICE", "SYS_ADMIN")), "capabilities beyond Pod Security baseline"),
		create("baseline capabilities", deployments, "Deployment", "team-a", deployment(caps("NET_BIND_SERVICE", "CHOWN")), ""),
		create("a DaemonSet with a hostPath", daemonSets, "DaemonSet", "team-a",
			&appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: podSpec(hostPath)}}}, "hostPath volumes"),
		create("a ReplicaSet with hostNetwork", replicaSets, "ReplicaSet", "team-a",
			&appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Template: corev1.PodTemplateSpec{Spec: podSpec(func(s *corev1.PodSpec) { s.HostNetwork = true })}}}, "hostNetwork"),
		create("a Job with hostPID", jobs, "Job", "team-a",
			&batchv1.Job{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec(func(s *corev1.PodSpec) { s.HostPID = true })}}}, "hostPID"),
		create("a CronJob with hostIPC", cronJobs, "CronJob", "team-a", &batchv1.CronJob{Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec(func(s *corev1.PodSpec) { s.HostIPC = true })}}}}}, "hostIPC"),
		create("a StatefulSet with hostNetwork", statefulSets, "StatefulSet", "team-a",
			&appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Template: corev1.PodTemplateSpec{Spec: podSpec(func(s *corev1.PodSpec) { s.HostNetwork = true })}}}, "hostNetwork"),
		create("a StatefulSet with a privileged container", statefulSets, "StatefulSet", "team-a",
			&appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Template: corev1.PodTemplateSpec{Spec: podSpec(func(s *corev1.PodSpec) { s.Containers[0].SecurityContext = privileged })}}},
			"privileged containers"),
		create("a plain StatefulSet", statefulSets, "StatefulSet", "team-a",
			&appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Template: corev1.PodTemplateSpec{Spec: podSpec(nil)}}}, ""),
		create("a CronJob with a hostPath", cronJobs, "CronJob", "team-a", &batchv1.CronJob{Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec(hostPath)}}}}}, "hostPath volumes"),
		create("a plain CronJob", cronJobs, "CronJob", "team-a", &batchv1.CronJob{Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec(nil)}}}}}, ""),
		{name: "a StatefulSet's scale", user: fedUser, op: admission.Update, resource: statefulSets, sub: "scale", kind: "Scale",
			namespace: "team-a", objName: "x", obj: &corev1.ConfigMap{}, old: &corev1.ConfigMap{}},
		create("a privileged Pod", pods, "Pod", "team-a", &corev1.Pod{Spec: podSpec(func(s *corev1.PodSpec) { s.Containers[0].SecurityContext = privileged })},
			"privileged containers"),
		{name: "a privileged ephemeral container", user: fedUser, op: admission.Update, resource: pods, sub: "ephemeralcontainers", kind: "Pod",
			namespace: "team-a", objName: "x", old: &corev1.Pod{Spec: podSpec(nil)}, obj: &corev1.Pod{Spec: podSpec(func(s *corev1.PodSpec) {
				s.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e", Image: "e", SecurityContext: privileged}}}
			})}, refused: "privileged containers"},
		{name: "a Deployment's scale", user: fedUser, op: admission.Update, resource: deployments, sub: "scale", kind: "Scale",
			namespace: "team-a", objName: "x", obj: &corev1.ConfigMap{}, old: &corev1.ConfigMap{}},
	} {
		t.Run(r.name, func(t *testing.T) {
			refusals := decide(t, v, r)
			if r.refused == "" {
				assert.Empty(t, refusals)
				return
			}
			require.Len(t, refusals, 1, "one rule refuses")
			assert.Contains(t, refusals[0], r.refused)
			assert.Contains(t, refusals[0], "(policy federation-fed)")
		})
	}
}

// compile compiles the policy as the member's ValidatingAdmissionPolicy
// plugin does.
func compile(t *testing.T, p *admissionregistrationv1.ValidatingAdmissionPolicy) validating.Validator {
	t.Helper()
	withAuthz := plugincel.OptionalVariableDeclarations{HasAuthorizer: true}
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	require.NoError(t, err)
	variables := make([]plugincel.NamedExpressionAccessor, len(p.Spec.Variables))
	for i, v := range p.Spec.Variables {
		variables[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	compiler.CompileAndStoreVariables(variables, withAuthz, environment.StoredExpressions)
	conditions := make([]plugincel.ExpressionAccessor, len(p.Spec.MatchConditions))
	for i := range p.Spec.MatchConditions {
		conditions[i] = (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i])
	}
	validations := make([]plugincel.ExpressionAccessor, len(p.Spec.Validations))
	messages := make([]plugincel.ExpressionAccessor, len(p.Spec.Validations))
	for i, v := range p.Spec.Validations {
		validations[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		if v.MessageExpression != "" {
			messages[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	validationFilter := compiler.CompileCondition(validations, withAuthz, environment.StoredExpressions)
	messageFilter := compiler.CompileCondition(messages, plugincel.OptionalVariableDeclarations{}, environment.StoredExpressions)
	for _, f := range []plugincel.ConditionEvaluator{validationFilter, messageFilter} {
		for _, r := range f.(interface {
			CompilationErrors() []error
		}).CompilationErrors() {
			require.NoError(t, r)
		}
	}
	matcher := matchconditions.NewMatcher(compiler.CompileCondition(conditions, withAuthz, environment.StoredExpressions), p.Spec.FailurePolicy, "policy", "validate", p.Name)
	noAudit := compiler.CompileCondition(nil, withAuthz, environment.StoredExpressions)
	return validating.NewValidator(validationFilter, matcher, noAudit, messageFilter, p.Spec.FailurePolicy, nil)
}

// decide returns the messages of the policy's refusals of r, in a
// namespace the federation created when r names one; an evaluation error
// fails the test.
func decide(t *testing.T, v validating.Validator, r request) []string {
	t.Helper()
	var ns *corev1.Namespace
	if r.namespace != "" && r.kind != "Namespace" {
		ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.namespace, Labels: map[string]string{memberrbac.CreatedByLabel: "fed"}}}
	}
	return decideIn(t, v, r, ns)
}

// decideIn is decide for a request in namespace ns (the policy's
// namespaceObject; nil as for a Namespace or a cluster-scoped object).
func decideIn(t *testing.T, v validating.Validator, r request, ns *corev1.Namespace) []string {
	t.Helper()
	groups := []string{user.AllAuthenticated}
	if strings.HasPrefix(r.user, serviceaccount.ServiceAccountUsernamePrefix) {
		groups = append(groups, serviceaccount.AllServiceAccountsGroup, serviceaccount.MakeNamespaceGroupName("federation-system"))
	}
	gvk := r.resource.GroupVersion().WithKind(r.kind)
	if r.sub == "scale" {
		gvk = schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
	}
	attrs := admission.NewAttributesRecord(r.obj, r.old, gvk, r.namespace, r.objName, r.resource, r.sub, r.op, nil, false,
		&user.DefaultInfo{Name: r.user, Groups: groups})
	versioned := &admission.VersionedAttributes{Attributes: attrs, VersionedKind: gvk, VersionedObject: r.obj, VersionedOldObject: r.old}
	result := v.Validate(context.Background(), r.resource, versioned, nil, ns, celconfig.RuntimeCELCostBudget, nil)
	var refusals []string
	for _, d := range result.Decisions {
		require.NotEqual(t, validating.EvalError, d.Evaluation, d.Message)
		if d.Action == validating.ActionDeny {
			assert.Equal(t, metav1.StatusReasonForbidden, d.Reason)
			refusals = append(refusals, d.Message)
		}
	}
	return refusals
}

func TestInstallPolicyAndRollback(t *testing.T) {
	ctx := context.Background()
	a := newMemberAccess("fed")
	member := fake.NewClientset()
	undo := &rollback{}
	require.NoError(t, installPolicy(ctx, member, a, undo))
	got, err := member.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "federation-fed", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, a.Policy.Spec, got.Spec)
	_, err = member.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, "federation-fed", metav1.GetOptions{})
	require.NoError(t, err)

	again := &rollback{}
	require.NoError(t, installPolicy(ctx, member, a, again), "a second install replaces the first")
	require.NoError(t, again.run())
	_, err = member.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, "federation-fed", metav1.GetOptions{})
	require.NoError(t, err, "a failed join keeps a policy that was there before it")

	require.NoError(t, undo.run())
	_, err = member.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "federation-fed", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "a failed join removes the policy it installed: %v", err)
	_, err = member.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, "federation-fed", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "and its binding: %v", err)

	require.NoError(t, installPolicy(ctx, member, a, &rollback{}))
	assert.Empty(t, removePolicy(ctx, member, "fed"))
	assert.Empty(t, removePolicy(ctx, member, "fed"), "removing what is gone is fine")
	list, err := member.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, list.Items)
}

// The federation writes only in a namespace it created or was adopted in.
func TestMemberPolicyNamespaceRule(t *testing.T) {
	a := newMemberAccess("fed")
	fedUser := accountUsername(a.Account.Namespace, a.Account.Name)
	v := compile(t, a.Policy)
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	events := schema.GroupVersionResource{Version: "v1", Resource: "events"}
	labelled := func(labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "payments", Labels: labels}}
	}
	created := labelled(map[string]string{memberrbac.CreatedByLabel: "fed"})
	adopted := labelled(map[string]string{memberrbac.AdoptedByLabel("fed"): "true"})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
	ourCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{federationv1beta1.FederationLabel: "fed"}}}
	othersCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{federationv1beta1.FederationLabel: "other"}}}
	const refused = `federation "fed" may not write in namespace payments: it neither created it nor was it adopted (label federation.kubernetes.io/created-by or federation.kubernetes.io/adopted-by.fed) (policy federation-fed)`
	req := func(name string, op admission.Operation) request {
		r := request{name: name, user: fedUser, op: op, resource: configMaps, kind: "ConfigMap", namespace: "payments", objName: "x"}
		switch op {
		case admission.Create:
			r.obj = cm
		case admission.Update:
			r.obj, r.old = cm, cm
		case admission.Delete:
			r.old = cm
		}
		return r
	}
	for _, s := range []struct {
		request
		in   *corev1.Namespace
		want string
	}{
		{req("in a namespace it created", admission.Create), created, ""},
		{req("in a namespace adopted for it", admission.Update), adopted, ""},
		{req("in a member's own namespace", admission.Create), labelled(nil), refused},
		{req("updating in a member's own namespace", admission.Update), labelled(map[string]string{"team": "payments"}), refused},
		{req("deleting in a member's own namespace", admission.Delete), labelled(nil), refused},
		{req("in another federation's namespace", admission.Create), labelled(map[string]string{memberrbac.CreatedByLabel: "other"}), refused},
		{req("in a namespace another federation adopted", admission.Create), labelled(map[string]string{memberrbac.AdoptedByLabel("other"): "true"}), refused},
		{req("in a namespace adopted for it, marked other than true", admission.Create), labelled(map[string]string{memberrbac.AdoptedByLabel("fed"): "fed"}), refused},
		{req("in a namespace the member does not have", admission.Create), nil, refused},
		{request{name: "deleting its own copy in a namespace no longer its own", user: fedUser, op: admission.Delete, resource: configMaps, kind: "ConfigMap",
			namespace: "payments", objName: "x", old: ourCM}, labelled(nil), ""},
		{request{name: "letting its own copy go there (its label off)", user: fedUser, op: admission.Update, resource: configMaps, kind: "ConfigMap",
			namespace: "payments", objName: "x", obj: cm, old: ourCM}, labelled(nil), ""},
		{request{name: "updating its own copy there", user: fedUser, op: admission.Update, resource: configMaps, kind: "ConfigMap",
			namespace: "payments", objName: "x", obj: ourCM, old: ourCM}, labelled(nil), refused},
		{request{name: "deleting a member object labelled another federation's", user: fedUser, op: admission.Delete, resource: configMaps, kind: "ConfigMap",
			namespace: "payments", objName: "x", old: othersCM}, labelled(nil), refused},
		{request{name: "a Deployment in a member's own namespace", user: fedUser, op: admission.Create, resource: deployments, kind: "Deployment",
			namespace: "payments", objName: "x", obj: &appsv1.Deployment{}}, labelled(nil), refused},
		{request{name: "an event in a member's own namespace", user: fedUser, op: admission.Create, resource: events, kind: "Event",
			namespace: "payments", objName: "x", obj: &corev1.Event{}}, labelled(nil), ""},
		{request{name: "a member admin in a member's own namespace", user: "admin", op: admission.Create, resource: configMaps, kind: "ConfigMap",
			namespace: "payments", objName: "x", obj: cm}, labelled(nil), ""},
		// A Namespace's own request names it as its namespace, with no
		// namespaceObject: its marks have rules of their own.
		{request{name: "updating a member's Namespace", user: fedUser, op: admission.Update, resource: namespaces, kind: "Namespace",
			namespace: "payments", objName: "payments", obj: labelled(nil), old: labelled(nil)}, nil, ""},
		{request{name: "kube-system, still refused by its own rule", user: fedUser, op: admission.Create, resource: configMaps, kind: "ConfigMap",
			namespace: "kube-system", objName: "x", obj: cm}, nil, `federation "fed" may not write to namespace kube-system`},
	} {
		t.Run(s.name, func(t *testing.T) {
			refusals := decideIn(t, v, s.request, s.in)
			if s.want == "" {
				assert.Empty(t, refusals)
				return
			}
			require.Len(t, refusals, 1, "one rule refuses")
			assert.Equal(t, s.want, refusals[0][:min(len(s.want), len(refusals[0]))])
		})
	}
}
