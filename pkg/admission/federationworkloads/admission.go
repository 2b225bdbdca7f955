// Package federationworkloads is a validating admission plugin that
// refuses, with a 422 naming the field, the propagated objects that would
// make each member act for their author beyond what the author owns there:
//
//   - a Service's spec.externalIPs outside the CIDRs of the federation
//     apiserver's --allowed-service-external-ip-cidrs (none by default), as
//     kube-apiserver's DenyServiceExternalIPs: every member's kube-proxy
//     would route those addresses, anyone's, to the Service
//     (CVE-2020-8554);
//   - a pod spec (a Pod's, or the template of a Deployment, ReplicaSet,
//     DaemonSet, StatefulSet, Job, ReplicationController or CronJob, in
//     every group and version served) whose serviceAccountName (or its
//     alias serviceAccount) names such an account: its pods would run as
//     it. Empty and "default" are every member namespace's own default
//     account, which any pod of the namespace runs as anyway;
//   - a PersistentVolumeClaim (or a StatefulSet's claim template, or a pod
//     spec's ephemeral volume template) with spec.volumeName or
//     spec.selector, which in each member binds that cluster's
//     PersistentVolume of that name or those labels, whoever's (the
//     federation propagates none), or with a spec.dataSource or
//     spec.dataSourceRef other than a claim of its namespace: each member
//     would fill it from its own snapshot or populator object of that
//     name, which the federation does not propagate either;
//   - a pod spec naming a ResourceClaim, a ResourceClaimTemplate or a
//     PodGroup, kinds the federation does not propagate: its pods would
//     use the member's devices or scheduling group of that name;
//   - an Ingress with a resource backend, an object of a kind the
//     federation does not propagate, resolved in each member;
//   - an ExternalName Service naming a Service of another namespace in
//     the members' cluster domain (NAME.NAMESPACE.svc..., or a relative
//     NAME, which each reader's search path completes in its own
//     namespace): ingress controllers and meshes follow it there with
//     their own rights.
//
// Objects that are never propagated (local, or in a never-propagated
// namespace) reach no member and are left alone. On an update only what
// changed is checked, so that an object whose account was deleted since
// can still be updated (its finalizer removed among others) and one made
// before the rule keeps working.
package federationworkloads

import (
	"context"
	"fmt"
	"io"
	"net"
	"reflect"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/kubernetes/pkg/apis/apps"
	"k8s.io/kubernetes/pkg/apis/batch"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/networking"
	netutils "k8s.io/utils/net"

	"github.com/federation-v1/federation/pkg/admission/internal/federated"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// PluginName is the name of the plugin in --enable-admission-plugins.
const PluginName = "FederationWorkloads"

// Register adds the plugin to plugins. externalIPCIDRs returns the
// allowed external IP CIDRs; it is called as the plugin is made, after
// the flags are parsed.
func Register(plugins *admission.Plugins, externalIPCIDRs func() []string) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) {
		cidrs, err := ParseCIDRs(externalIPCIDRs())
		if err != nil {
			return nil, err
		}
		return New(cidrs), nil
	})
}

// ParseCIDRs parses the allowed external IP CIDRs.
func ParseCIDRs(cidrs []string) ([]*net.IPNet, error) {
	nets := make([]*net.IPNet, 0, len(cidrs))
	for _, c := range cidrs {
		_, n, err := net.ParseCIDR(c)
		if err != nil {
			return nil, fmt.Errorf("%q: not a CIDR", c)
		}
		nets = append(nets, n)
	}
	return nets, nil
}

// New returns the plugin, allowing external IPs in externalIPCIDRs.
func New(externalIPCIDRs []*net.IPNet) *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update), externalIPCIDRs: externalIPCIDRs}
}

// Plugin validates propagated Services, Secrets, pod specs, claims and
// Ingresses.
type Plugin struct {
	*admission.Handler
	// Lookup finds the service accounts named.
	federated.Lookup
	externalIPCIDRs []*net.IPNet
}

var (
	_ admission.ValidationInterface                = &Plugin{}
	_ admission.InitializationValidator            = &Plugin{}
	_ initializer.WantsExternalKubeInformerFactory = &Plugin{}
	_ initializer.WantsExternalKubeClientSet       = &Plugin{}
)

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if err := p.Lookup.ValidateInitialization(); err != nil {
		return fmt.Errorf("%s: %w", PluginName, err)
	}
	return nil
}

// Validate refuses what the package comment says.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	// Status and scale leave the spec, and so all of this, as it is.
	if a.GetSubresource() != "" || !propagated(a, a.GetObject()) {
		return nil
	}
	old := a.GetOldObject()
	if !propagated(a, old) {
		old = nil // checked as if created: it reaches the members only now
	}
	var errs field.ErrorList
	var err error
	switch o := a.GetObject().(type) {
	case *api.Service:
		oldService, _ := old.(*api.Service)
		errs = append(p.validateExternalIPs(o, oldService), validateExternalName(o, oldService)...)
	case *api.PersistentVolumeClaim:
		var oldSpec *api.PersistentVolumeClaimSpec
		if oldClaim, ok := old.(*api.PersistentVolumeClaim); ok {
			oldSpec = &oldClaim.Spec
		}
		errs = validateClaimSpec(&o.Spec, oldSpec, field.NewPath("spec"))
	case *networking.Ingress:
		oldIngress, _ := old.(*networking.Ingress)
		errs = validateIngress(o, oldIngress)
	default:
		errs, err = p.validatePodSpec(ctx, a.GetNamespace(), o, old)
	}
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(a.GetKind().GroupKind(), a.GetName(), errs)
}

// propagated reports whether obj, an object of the request, exists and
// would reach the members.
func propagated(a admission.Attributes, obj runtime.Object) bool {
	if obj == nil {
		return false
	}
	m, err := meta.Accessor(obj)
	return err == nil && federated.Propagated(a.GetResource().GroupResource(), a.GetNamespace(), m)
}

// validateExternalIPs refuses the external IPs outside the allowed CIDRs,
// except those the Service had already (as DenyServiceExternalIPs: what
// was accepted before the rule may stay, and be removed).
func (p *Plugin) validateExternalIPs(s, old *api.Service) field.ErrorList {
	had := map[string]bool{}
	if old != nil {
		for _, ip := range old.Spec.ExternalIPs {
			had[ip] = true
		}
	}
	var errs field.ErrorList
	for i, ip := range s.Spec.ExternalIPs {
		if had[ip] || p.externalIPAllowed(ip) {
			continue
		}
		errs = append(errs, field.Forbidden(field.NewPath("spec", "externalIPs").Index(i), fmt.Sprintf(
			"%s is not in the external IP ranges the federation allows (%s): each member would route traffic for it, whoever owns it, to this Service; "+
				"a federation admin allows ranges with federation-apiserver's --allowed-service-external-ip-cidrs", ip, p.allowedList())))
	}
	return errs
}

func (p *Plugin) externalIPAllowed(s string) bool {
	// The members' own parsing: Kubernetes validated the address so.
	ip := netutils.ParseIPSloppy(s)
	if ip == nil {
		return false
	}
	for _, n := range p.externalIPCIDRs {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

func (p *Plugin) allowedList() string {
	if len(p.externalIPCIDRs) == 0 {
		return "none"
	}
	s := make([]string, len(p.externalIPCIDRs))
	for i, n := range p.externalIPCIDRs {
		s[i] = n.String()
	}
	return strings.Join(s, ", ")
}

// validatePodSpec refuses a pod spec, if obj has one, whose service
// account the federation does not propagate in namespace ns, or which
// names what the federation never propagates (podClaims).
func (p *Plugin) validatePodSpec(ctx context.Context, ns string, obj, old runtime.Object) (field.ErrorList, error) {
	spec, path := podSpec(obj)
	if spec == nil {
		return nil, nil
	}
	oldSpec, _ := podSpec(old)
	errs := append(podClaims(spec, oldSpec, path), statefulSetClaims(obj, old)...)
	accountErrs, err := p.validateAccount(ctx, ns, spec, oldSpec, path)
	return append(errs, accountErrs...), err
}

// validateAccount refuses a pod spec at path whose service account the
// federation does not propagate in namespace ns.
func (p *Plugin) validateAccount(ctx context.Context, ns string, spec, oldSpec *api.PodSpec, path *field.Path) (field.ErrorList, error) {
	if spec.ServiceAccountName == "" || spec.ServiceAccountName == "default" {
		return nil, nil
	}
	if oldSpec != nil && oldSpec.ServiceAccountName == spec.ServiceAccountName {
		return nil, nil
	}
	why, err := p.unpropagatedAccount(ctx, ns, spec.ServiceAccountName)
	if why == "" || err != nil {
		return nil, err
	}
	// The internal API has one field for both; the member gets both.
	return field.ErrorList{field.Invalid(path.Child("serviceAccountName"), spec.ServiceAccountName,
		why+": in each member its pods would run as that cluster's own account of that name (set by serviceAccountName or serviceAccount)")}, nil
}

// unpropagatedAccount says why the federation does not propagate the
// service account ns/name, or "" if it does.
func (p *Plugin) unpropagatedAccount(ctx context.Context, ns, name string) (string, error) {
	sa, err := p.ServiceAccount(ctx, ns, name)
	switch {
	case err != nil:
		return "", fmt.Errorf("looking up the service account %s/%s: %w", ns, name, err)
	case sa == nil:
		return fmt.Sprintf("no ServiceAccount %q exists at the federation in the namespace %q (create it there first)", name, ns), nil
	case federatedtypes.Local(sa):
		return fmt.Sprintf("the ServiceAccount %q is labelled federation.kubernetes.io/local=true and stays at the federation", name), nil
	}
	return "", nil
}

// validateClaimSpec refuses a claim spec at path binding a member's
// volume (by name or by labels) or filled from anything but a claim of
// its namespace, unless the old spec had the same.
func validateClaimSpec(c, old *api.PersistentVolumeClaimSpec, spec *field.Path) field.ErrorList {
	if old == nil {
		old = &api.PersistentVolumeClaimSpec{}
	}
	var errs field.ErrorList
	if c.VolumeName != "" && old.VolumeName != c.VolumeName {
		errs = append(errs, field.Invalid(spec.Child("volumeName"), c.VolumeName,
			"the federation propagates no PersistentVolume: in each member this claim would bind that cluster's own volume of that name, whoever's it is"))
	}
	if c.Selector != nil && !reflect.DeepEqual(old.Selector, c.Selector) {
		errs = append(errs, field.Invalid(spec.Child("selector"), metav1.FormatLabelSelector(c.Selector),
			"the federation propagates no PersistentVolume: in each member this claim would bind that cluster's own volume of those labels, whoever's it is; use a storage class"))
	}
	if s := c.DataSource; s != nil && !reflect.DeepEqual(old.DataSource, s) && !claimSource(s.APIGroup, s.Kind, nil) {
		errs = append(errs, field.Invalid(spec.Child("dataSource"), kindName(s.APIGroup, s.Kind, s.Name), notPropagated))
	}
	if s := c.DataSourceRef; s != nil && !reflect.DeepEqual(old.DataSourceRef, s) && !claimSource(s.APIGroup, s.Kind, s.Namespace) {
		errs = append(errs, field.Invalid(spec.Child("dataSourceRef"), kindName(s.APIGroup, s.Kind, s.Name), notPropagated+
			" (a claim of another namespace neither: the federation checks only the claim's own namespace)"))
	}
	return errs
}

// podClaims refuses, in a pod spec at path, ephemeral volume templates
// validateClaimSpec refuses, and claims of devices (ResourceClaims and
// their templates) or a PodGroup: kinds the federation does not
// propagate. What the old spec had may stay.
func podClaims(spec, old *api.PodSpec, path *field.Path) field.ErrorList {
	if old == nil {
		old = &api.PodSpec{}
	}
	var errs field.ErrorList
	oldTemplates := map[string]*api.PersistentVolumeClaimSpec{}
	for _, v := range old.Volumes {
		if e := v.Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
			oldTemplates[v.Name] = &e.VolumeClaimTemplate.Spec
		}
	}
	for i, v := range spec.Volumes {
		if e := v.Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
			errs = append(errs, validateClaimSpec(&e.VolumeClaimTemplate.Spec, oldTemplates[v.Name],
				path.Child("volumes").Index(i).Child("ephemeral", "volumeClaimTemplate", "spec"))...)
		}
	}
	for i, c := range spec.ResourceClaims {
		if slices.ContainsFunc(old.ResourceClaims, func(o api.PodResourceClaim) bool { return reflect.DeepEqual(o, c) }) {
			continue
		}
		p := path.Child("resourceClaims").Index(i)
		if c.ResourceClaimName != nil {
			errs = append(errs, field.Invalid(p.Child("resourceClaimName"), *c.ResourceClaimName, notPropagatedKind("ResourceClaim")))
		}
		if c.ResourceClaimTemplateName != nil {
			errs = append(errs, field.Invalid(p.Child("resourceClaimTemplateName"), *c.ResourceClaimTemplateName, notPropagatedKind("ResourceClaimTemplate")))
		}
	}
	if g := spec.SchedulingGroup; g != nil && g.PodGroupName != nil && !reflect.DeepEqual(old.SchedulingGroup, g) {
		errs = append(errs, field.Invalid(path.Child("schedulingGroup", "podGroupName"), *g.PodGroupName, notPropagatedKind("PodGroup")))
	}
	return errs
}

func notPropagatedKind(kind string) string {
	return "the federation propagates no " + kind + ": in each member the pods would use that cluster's own " + kind + " of that name, whoever's it is"
}

// statefulSetClaims refuses the claim templates of a StatefulSet that
// validateClaimSpec refuses (the member makes claims of them as they
// are), unless the old template of the name had the same.
func statefulSetClaims(obj, old runtime.Object) field.ErrorList {
	sts, ok := obj.(*apps.StatefulSet)
	if !ok {
		return nil
	}
	had := map[string]*api.PersistentVolumeClaimSpec{}
	if o, ok := old.(*apps.StatefulSet); ok {
		for i := range o.Spec.VolumeClaimTemplates {
			had[o.Spec.VolumeClaimTemplates[i].Name] = &o.Spec.VolumeClaimTemplates[i].Spec
		}
	}
	var errs field.ErrorList
	for i := range sts.Spec.VolumeClaimTemplates {
		t := &sts.Spec.VolumeClaimTemplates[i]
		errs = append(errs, validateClaimSpec(&t.Spec, had[t.Name], field.NewPath("spec", "volumeClaimTemplates").Index(i).Child("spec"))...)
	}
	return errs
}

// validateExternalName refuses an ExternalName Service naming a Service of
// another namespace in the members' cluster domain, unless the old
// Service named the same.
func validateExternalName(s, old *api.Service) field.ErrorList {
	if s.Spec.Type != api.ServiceTypeExternalName || (old != nil && old.Spec.Type == s.Spec.Type && old.Spec.ExternalName == s.Spec.ExternalName) {
		return nil
	}
	service, ns, ok := federatedtypes.ClusterServiceName(s.Spec.ExternalName)
	if !ok || ns == s.Namespace {
		return nil
	}
	if ns == "" {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "externalName"), s.Spec.ExternalName, fmt.Sprintf(
			"is one label, which each reader resolves, through its search path, to the Service %q of its own namespace: the members' ingress controllers and meshes "+
				"would follow it into theirs; name NAME.NAMESPACE.svc.DOMAIN or a name outside the cluster", service))}
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "externalName"), s.Spec.ExternalName, fmt.Sprintf(
		"names the Service %q of namespace %q in the members' cluster domain: their ingress controllers and meshes would follow it there, "+
			"where the federation checks nothing; name Services of this namespace only", service, ns))}
}

const notPropagated = "the federation propagates only PersistentVolumeClaims of the claim's namespace as data sources: " +
	"in each member it would be filled from that cluster's own object of that name, whoever's it is"

// claimSource reports whether a data source is a claim of the same namespace.
func claimSource(group *string, kind string, ns *string) bool {
	return (group == nil || *group == "") && kind == "PersistentVolumeClaim" && (ns == nil || *ns == "")
}

func kindName(group *string, kind, name string) string {
	if group != nil && *group != "" {
		kind = *group + "/" + kind
	}
	return kind + " " + name
}

// validateIngress refuses resource backends, except those the old Ingress
// had (they may stay, and be removed).
func validateIngress(ing, old *networking.Ingress) field.ErrorList {
	had := map[string]bool{}
	if old != nil {
		eachBackend(old, func(b *networking.IngressBackend, _ *field.Path) {
			if r := b.Resource; r != nil {
				had[kindName(r.APIGroup, r.Kind, r.Name)] = true
			}
		})
	}
	var errs field.ErrorList
	eachBackend(ing, func(b *networking.IngressBackend, p *field.Path) {
		if r := b.Resource; r != nil && !had[kindName(r.APIGroup, r.Kind, r.Name)] {
			errs = append(errs, field.Invalid(p.Child("resource"), kindName(r.APIGroup, r.Kind, r.Name),
				"the federation propagates no resource backends: in each member it would name that cluster's own object of that name, whoever's it is; use a service backend"))
		}
	})
	return errs
}

// eachBackend calls f with each backend of ing and its path.
func eachBackend(ing *networking.Ingress, f func(*networking.IngressBackend, *field.Path)) {
	spec := field.NewPath("spec")
	if ing.Spec.DefaultBackend != nil {
		f(ing.Spec.DefaultBackend, spec.Child("defaultBackend"))
	}
	for i, rule := range ing.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for j := range rule.HTTP.Paths {
			f(&rule.HTTP.Paths[j].Backend, spec.Child("rules").Index(i).Child("http", "paths").Index(j).Child("backend"))
		}
	}
}

// podSpec returns the pod spec of a workload, and its path.
func podSpec(obj runtime.Object) (*api.PodSpec, *field.Path) {
	spec := field.NewPath("spec")
	template := spec.Child("template", "spec")
	switch o := obj.(type) {
	case *api.Pod:
		return &o.Spec, spec
	case *api.ReplicationController:
		if o.Spec.Template == nil {
			return nil, nil
		}
		return &o.Spec.Template.Spec, template
	case *apps.Deployment:
		return &o.Spec.Template.Spec, template
	case *apps.ReplicaSet:
		return &o.Spec.Template.Spec, template
	case *apps.DaemonSet:
		return &o.Spec.Template.Spec, template
	case *apps.StatefulSet:
		return &o.Spec.Template.Spec, template
	case *batch.Job:
		return &o.Spec.Template.Spec, template
	case *batch.CronJob:
		return &o.Spec.JobTemplate.Spec.Template.Spec, spec.Child("jobTemplate", "spec", "template", "spec")
	}
	return nil, nil
}
