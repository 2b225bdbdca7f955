package kubefed

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// joinSettings are the choices of a join that a refresh keeps.
type joinSettings struct {
	customResourceGroups []string
	podSecurity          string
	// groupsGiven and podSecurityGiven say the refresh's command line gave
	// them, rather than the member's objects.
	groupsGiven, podSecurityGiven bool
}

// recordedSettings recovers the settings a member was joined with from its
// ClusterRole and policy (either nil when absent): the annotations join
// records (customResourceGroupsAnnotation, podSecurityAnnotation), and for
// members joined before a kubefed recorded them, what the rules say: the
// groups of the role's rules on every resource of a group and of the
// policy's CRD validation, restricted if the policy has restricted's
// validations.
func recordedSettings(role *rbacv1.ClusterRole, policy *admissionregistrationv1.ValidatingAdmissionPolicy) joinSettings {
	s := joinSettings{podSecurity: podSecurityBaseline}
	var annotations map[string]string
	if role != nil {
		annotations = role.Annotations
	}
	if groups, ok := annotations[customResourceGroupsAnnotation]; ok {
		s.customResourceGroups = splitList(groups)
	} else {
		if role != nil {
			for _, r := range role.Rules {
				if slices.Equal(r.Resources, []string{"*"}) && len(r.ResourceNames) == 0 && len(r.NonResourceURLs) == 0 {
					s.customResourceGroups = appendNew(s.customResourceGroups, r.APIGroups...)
				}
			}
		}
		if policy != nil {
			s.customResourceGroups = appendNew(s.customResourceGroups, policyCRDGroups(policy)...)
		}
	}
	if policy == nil {
		return s
	}
	if level := policy.Annotations[podSecurityAnnotation]; validatePodSecurity(level) == nil {
		s.podSecurity = level
		return s
	}
	for _, v := range policy.Spec.Validations {
		if strings.Contains(v.Message, "(Pod Security "+podSecurityRestricted+")") {
			s.podSecurity = podSecurityRestricted
		}
	}
	return s
}

// crdValidationPrefix begins crdValidation's expression.
const crdValidationPrefix = "request.resource.group != 'apiextensions.k8s.io'"

// policyCRDGroups are the groups of the policy's CRD validation
// (crdValidation), none without one.
func policyCRDGroups(policy *admissionregistrationv1.ValidatingAdmissionPolicy) []string {
	const in = ".spec.group in "
	for _, v := range policy.Spec.Validations {
		i := strings.LastIndex(v.Expression, in)
		if !strings.HasPrefix(v.Expression, crdValidationPrefix) || i < 0 {
			continue
		}
		// celList quotes as Go does, which for DNS names is JSON.
		var groups []string
		if json.Unmarshal([]byte(v.Expression[i+len(in):]), &groups) == nil {
			return groups
		}
	}
	return nil
}

// describeKept names the settings kept from the member that are not join's
// defaults, as flags; empty when there are none.
func (s joinSettings) describeKept() string {
	var kept []string
	if !s.podSecurityGiven && s.podSecurity != podSecurityBaseline {
		kept = append(kept, "--pod-security="+s.podSecurity)
	}
	if !s.groupsGiven && len(s.customResourceGroups) > 0 {
		kept = append(kept, "--custom-resource-groups="+strings.Join(s.customResourceGroups, ","))
	}
	return strings.Join(kept, " ")
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// appendNew appends the items not in list yet.
func appendNew(list []string, items ...string) []string {
	for _, item := range items {
		if !slices.Contains(list, item) {
			list = append(list, item)
		}
	}
	return list
}

// roleChanges says how next differs from cur (nil when absent).
func roleChanges(cur, next *rbacv1.ClusterRole) []string {
	if cur == nil {
		return []string{fmt.Sprintf("%d rules", len(next.Rules))}
	}
	out := ruleChanges(cur.Rules, next.Rules)
	if !apiequality.Semantic.DeepEqual(cur.AggregationRule, next.AggregationRule) {
		out = append(out, "aggregation rule changed")
	}
	return append(out, metaChanges(cur.ObjectMeta, next.ObjectMeta)...)
}

// ruleChanges says how the rules next differ from cur: how many rules came
// and went, and which resources (or URLs) gain or lose verbs.
func ruleChanges(cur, next []rbacv1.PolicyRule) []string {
	var out []string
	added, removed := missingFrom(next, cur), missingFrom(cur, next)
	var counts []string
	if added > 0 {
		counts = append(counts, fmt.Sprintf("+%d rules", added))
	}
	if removed > 0 {
		counts = append(counts, fmt.Sprintf("-%d rules", removed))
	}
	if len(counts) > 0 {
		out = append(out, strings.Join(counts, ", "))
	} else if !apiequality.Semantic.DeepEqual(cur, next) {
		out = append(out, "rules reordered")
	}
	if gained := rightsMissingFrom(next, cur); len(gained) > 0 {
		out = append(out, "new rights on "+shortList(gained))
	}
	if lost := rightsMissingFrom(cur, next); len(lost) > 0 {
		out = append(out, "rights removed on "+shortList(lost))
	}
	return out
}

// missingFrom counts the items of a that b lacks, as multisets.
func missingFrom[T any](a, b []T) int {
	left := slices.Clone(b)
	n := 0
	for _, x := range a {
		i := slices.IndexFunc(left, func(y T) bool { return apiequality.Semantic.DeepEqual(x, y) })
		if i < 0 {
			n++
			continue
		}
		left = slices.Delete(left, i, i+1)
	}
	return n
}

// rights are the verbs rules grant on each resource (resource.group, with
// /name when the rule names it) or non-resource URL.
func rights(rules []rbacv1.PolicyRule) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	grant := func(what string, verbs []string) {
		if out[what] == nil {
			out[what] = map[string]bool{}
		}
		for _, v := range verbs {
			out[what][v] = true
		}
	}
	for _, r := range rules {
		for _, url := range r.NonResourceURLs {
			grant(url, r.Verbs)
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				what := res
				if g != "" {
					what += "." + g
				}
				if len(r.ResourceNames) == 0 {
					grant(what, r.Verbs)
				}
				for _, name := range r.ResourceNames {
					grant(what+"/"+name, r.Verbs)
				}
			}
		}
	}
	return out
}

// rightsMissingFrom are, sorted, the resources and URLs that rules a
// grant a verb on that rules b do not.
func rightsMissingFrom(a, b []rbacv1.PolicyRule) []string {
	ra, rb := rights(a), rights(b)
	var out []string
	for what, verbs := range ra {
		for v := range verbs {
			if !rb[what][v] {
				out = append(out, what)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// shortList joins at most four items, and says how many more there are.
func shortList(items []string) string {
	const most = 4
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:most], ", "), len(items)-most)
}

// bindingChanges says how next differs from cur (nil when absent).
func bindingChanges(cur, next *rbacv1.ClusterRoleBinding) []string {
	if cur == nil {
		return nil
	}
	var out []string
	if !apiequality.Semantic.DeepEqual(cur.Subjects, next.Subjects) {
		out = append(out, "subjects changed")
	}
	return append(out, metaChanges(cur.ObjectMeta, next.ObjectMeta)...)
}

// policyChanges says how next differs from cur (nil when absent): how many
// validations came and went, and which other parts of the spec changed.
func policyChanges(cur, next *admissionregistrationv1.ValidatingAdmissionPolicy) []string {
	if cur == nil {
		return []string{fmt.Sprintf("%d validations", len(next.Spec.Validations))}
	}
	var out, counts []string
	c, n := cur.Spec, next.Spec
	if added := missingFrom(n.Validations, c.Validations); added > 0 {
		counts = append(counts, fmt.Sprintf("+%d validations", added))
	}
	if removed := missingFrom(c.Validations, n.Validations); removed > 0 {
		counts = append(counts, fmt.Sprintf("-%d validations", removed))
	}
	if len(counts) > 0 {
		out = append(out, strings.Join(counts, ", "))
	} else if !apiequality.Semantic.DeepEqual(c.Validations, n.Validations) {
		out = append(out, "validations reordered")
	}
	for _, part := range []struct {
		name     string
		cur, new any
	}{
		{"variables", c.Variables, n.Variables},
		{"match conditions", c.MatchConditions, n.MatchConditions},
		{"match constraints", c.MatchConstraints, n.MatchConstraints},
		{"failure policy", c.FailurePolicy, n.FailurePolicy},
		{"audit annotations", c.AuditAnnotations, n.AuditAnnotations},
		{"param kind", c.ParamKind, n.ParamKind},
	} {
		if !apiequality.Semantic.DeepEqual(part.cur, part.new) {
			out = append(out, part.name+" changed")
		}
	}
	return append(out, metaChanges(cur.ObjectMeta, next.ObjectMeta)...)
}

// policyBindingChanges says how next differs from cur (nil when absent).
func policyBindingChanges(cur, next *admissionregistrationv1.ValidatingAdmissionPolicyBinding) []string {
	if cur == nil {
		return nil
	}
	var out []string
	if !apiequality.Semantic.DeepEqual(cur.Spec, next.Spec) {
		out = append(out, "spec changed")
	}
	return append(out, metaChanges(cur.ObjectMeta, next.ObjectMeta)...)
}

// metaChanges says which labels and annotations next sets, changes or
// drops from cur.
func metaChanges(cur, next metav1.ObjectMeta) []string {
	return append(mapChanges("label", cur.Labels, next.Labels), mapChanges("annotation", cur.Annotations, next.Annotations)...)
}

func mapChanges(what string, cur, next map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(next)) {
		old, had := cur[k]
		switch {
		case !had:
			out = append(out, fmt.Sprintf("%s %s=%q added", what, k, next[k]))
		case old != next[k]:
			out = append(out, fmt.Sprintf("%s %s=%q (was %q)", what, k, next[k], old))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cur)) {
		if _, ok := next[k]; !ok {
			out = append(out, fmt.Sprintf("%s %s removed", what, k))
		}
	}
	return out
}
