package federatedtypes

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Reference is a member object that a copy names in its namespace and acts
// through there: the ServiceAccount its pods run as or a token Secret is
// minted for, the Secrets, ConfigMaps and claims its pods use, an HPA's
// target, a RoleBinding's Role, a claim's data source, an Ingress's
// Services and TLS Secrets. The member resolves the name with its own
// rights, whatever object of that name it holds, so a copy is written
// only where the object it names is the federation's own copy: else a
// tenant's copy would act through another team's member-only object (run
// as its account, mount its Secret, scale its Deployment, bind its Role).
type Reference struct {
	// Resource and Name of the object named, in the copy's namespace.
	Resource schema.GroupVersionResource
	Kind     string
	Name     string
	// Field is where the copy names it (the first place, if several).
	Field string
	// Optional is set when every place naming it says optional: true (a
	// pod starts without it): an absent object is then no reason to wait,
	// but one that exists and is not the federation's is still refused,
	// as the pods would use it.
	Optional bool
	// AtCreate is set when only the copy's creation uses the object (a
	// claim's data source, cloned as the member provisions it): once the
	// copy exists the object may go, and the copy must stay (deleting a
	// claim may delete its volume).
	AtCreate bool
}

// HPATarget returns the resource of a kind an HPA may scale: those the
// federation divides.
func HPATarget(kind string) (schema.GroupVersionResource, bool) {
	r, ok := hpaTargets[kind]
	return r, ok
}

// hpaTargets are the kinds an HPA may scale, by kind.
var hpaTargets = map[string]schema.GroupVersionResource{
	"Deployment":  {Group: "apps", Version: "v1", Resource: "deployments"},
	"ReplicaSet":  {Group: "apps", Version: "v1", Resource: "replicasets"},
	"StatefulSet": {Group: "apps", Version: "v1", Resource: "statefulsets"},
}

var (
	serviceAccounts = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	secrets         = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	configMaps      = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	// ClaimsResource is where claims are, in members too.
	ClaimsResource = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	services       = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	roles          = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
)

// podSpecPaths are where each kind holds its pod spec.
var podSpecPaths = map[string][]string{
	"Deployment":            {"spec", "template", "spec"},
	"ReplicaSet":            {"spec", "template", "spec"},
	"DaemonSet":             {"spec", "template", "spec"},
	"StatefulSet":           {"spec", "template", "spec"},
	"Job":                   {"spec", "template", "spec"},
	"ReplicationController": {"spec", "template", "spec"},
	"CronJob":               {"spec", "jobTemplate", "spec", "template", "spec"},
	"Pod":                   {"spec"},
}

// References lists the member objects a copy names (see Reference), or
// an error when it names one the federation never propagates (an HPA of a
// kind it does not divide, a claim's volume or snapshot, an Ingress's
// resource backend) or its spec cannot be read.
func References(copy *unstructured.Unstructured) ([]Reference, error) {
	kind := copy.GetKind()
	if path, ok := podSpecPaths[kind]; ok {
		var refs referenceList
		if err := refs.podSpec(copy, path); err != nil {
			return nil, err
		}
		if kind == "StatefulSet" {
			if err := refs.claimTemplates(copy); err != nil {
				return nil, err
			}
		}
		return refs.out, refs.err
	}
	switch kind {
	case "PersistentVolumeClaim":
		var spec corev1.PersistentVolumeClaimSpec
		if err := decodeAt(copy, &spec, "spec"); err != nil {
			return nil, err
		}
		var refs referenceList
		if err := refs.claimSpec(&spec, field.NewPath("spec")); err != nil {
			return nil, err
		}
		for i := range refs.out {
			refs.out[i].AtCreate = true
		}
		return refs.out, refs.err
	case "Ingress":
		return ingressReferences(copy)
	case "Service":
		return externalNameReferences(copy)
	case "ServiceAccount":
		// Its pods pull and mount with these. Optional: a member starts
		// pods without absent ones, as it does a pod's own.
		var sa corev1.ServiceAccount
		if err := decodeAt(copy, &sa); err != nil {
			return nil, err
		}
		var refs referenceList
		for i, s := range sa.ImagePullSecrets {
			refs.add(secrets, "Secret", s.Name, field.NewPath("imagePullSecrets").Index(i).Child("name"), true)
		}
		for i, s := range sa.Secrets {
			refs.add(secrets, "Secret", s.Name, field.NewPath("secrets").Index(i).Child("name"), true)
		}
		return refs.out, refs.err
	case "Secret":
		if t, _, _ := unstructured.NestedString(copy.Object, "type"); t != string(corev1.SecretTypeServiceAccountToken) {
			return nil, nil
		}
		name := copy.GetAnnotations()[corev1.ServiceAccountNameKey]
		return []Reference{{Resource: serviceAccounts, Kind: "ServiceAccount", Name: name,
			Field: "metadata.annotations[" + corev1.ServiceAccountNameKey + "]"}}, nil
	case "HorizontalPodAutoscaler":
		target, _, _ := unstructured.NestedString(copy.Object, "spec", "scaleTargetRef", "kind")
		name, _, _ := unstructured.NestedString(copy.Object, "spec", "scaleTargetRef", "name")
		apiVersion, _, _ := unstructured.NestedString(copy.Object, "spec", "scaleTargetRef", "apiVersion")
		resource, ok := hpaTargets[target]
		// The group too: a custom kind named Deployment is another's.
		if gv, err := schema.ParseGroupVersion(apiVersion); ok && (err != nil || (gv.Group != resource.Group && gv.Group != "extensions")) {
			return nil, fmt.Errorf("spec.scaleTargetRef.apiVersion: %q is not the group of the %s the federation divides (%s)", apiVersion, target, resource.Group)
		}
		if !ok {
			return nil, fmt.Errorf("spec.scaleTargetRef: %s %q is not a kind the federation divides (Deployment, ReplicaSet, StatefulSet)", target, name)
		}
		return []Reference{{Resource: resource, Kind: target, Name: name, Field: "spec.scaleTargetRef"}}, nil
	case "RoleBinding":
		kind, _, _ := unstructured.NestedString(copy.Object, "roleRef", "kind")
		name, _, _ := unstructured.NestedString(copy.Object, "roleRef", "name")
		if kind != "Role" {
			// ClusterRoles: bounded by the member's policy (bindable ones only).
			return nil, nil
		}
		return []Reference{{Resource: roles, Kind: "Role", Name: name, Field: "roleRef"}}, nil
	}
	return nil, nil
}

// ingressReferences names an Ingress's TLS Secrets and backend Services.
func ingressReferences(copy *unstructured.Unstructured) ([]Reference, error) {
	var spec networkingv1.IngressSpec
	if err := decodeAt(copy, &spec, "spec"); err != nil {
		return nil, err
	}
	p := field.NewPath("spec")
	var refs referenceList
	for i, tls := range spec.TLS {
		refs.add(secrets, "Secret", tls.SecretName, p.Child("tls").Index(i).Child("secretName"), false)
	}
	backend := func(b *networkingv1.IngressBackend, p *field.Path) error {
		switch {
		case b == nil:
		case b.Resource != nil:
			return notPropagated(p.Child("resource"), kindOf(b.Resource.APIGroup, b.Resource.Kind), b.Resource.Name)
		case b.Service != nil:
			// Optional: as in a cluster, an Ingress may come before its
			// Service (it answers 503 until then); another's is refused.
			refs.add(services, "Service", b.Service.Name, p.Child("service", "name"), true)
		}
		return nil
	}
	if err := backend(spec.DefaultBackend, p.Child("defaultBackend")); err != nil {
		return nil, err
	}
	for i, rule := range spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for j := range rule.HTTP.Paths {
			path := p.Child("rules").Index(i).Child("http", "paths").Index(j).Child("backend")
			if err := backend(&rule.HTTP.Paths[j].Backend, path); err != nil {
				return nil, err
			}
		}
	}
	return refs.out, refs.err
}

// externalNameReferences: an ExternalName Service is a DNS alias, which
// ingress controllers and meshes of the member follow to the Service it
// names there, with their own rights. One of the member's cluster names
// (SERVICE.NAMESPACE.svc[.DOMAIN], or HOST.SERVICE.NAMESPACE.svc...)
// names a Service: of another namespace it is refused (the federation
// checks only the copy's namespace), of its own it is a reference
// (optional, as an Ingress's backend: it may come after). Other names
// are outside the member.
func externalNameReferences(copy *unstructured.Unstructured) ([]Reference, error) {
	if t, _, _ := unstructured.NestedString(copy.Object, "spec", "type"); t != string(corev1.ServiceTypeExternalName) {
		return nil, nil
	}
	name, _, _ := unstructured.NestedString(copy.Object, "spec", "externalName")
	service, ns, ok := ClusterServiceName(name)
	switch {
	case !ok:
		return nil, nil
	case ns == "":
		return nil, fmt.Errorf("spec.externalName: %q is one label, which each reader resolves, through its search path, to the Service %q of its own namespace (an ingress controller's, say): name NAME.NAMESPACE.svc.DOMAIN or a name outside the cluster", name, service)
	case ns != copy.GetNamespace():
		return nil, fmt.Errorf("spec.externalName: %q is the Service %q of namespace %q in the member's cluster domain: a copy may name only Services of its own namespace", name, service, ns)
	}
	return []Reference{{Resource: services, Kind: "Service", Name: service, Field: "spec.externalName", Optional: true}}, nil
}

// ClusterServiceName reads a DNS name as a member's cluster DNS resolves it
// to a Service, and returns that Service and its namespace:
// SERVICE.NAMESPACE.svc and HOST.SERVICE.NAMESPACE.svc, with or without
// the cluster's domain after it; and a relative name of one label, which a
// resolver's search path makes a Service of the resolver's own namespace,
// whoever resolves it (namespace ""). A relative SERVICE.NAMESPACE is
// completed so too, but cannot be told from a public name (example.com):
// it is read as outside the cluster.
func ClusterServiceName(dnsName string) (service, namespace string, ok bool) {
	name := strings.ToLower(dnsName)
	relative := !strings.HasSuffix(name, ".")
	labels := strings.Split(strings.TrimSuffix(name, "."), ".")
	for i := 2; i < len(labels); i++ {
		if labels[i] == "svc" {
			return labels[i-2], labels[i-1], true
		}
	}
	// (localhost is answered by resolvers themselves: RFC 6761.)
	if name != "" && name != "localhost" && relative && len(labels) == 1 {
		return labels[0], "", true
	}
	return "", "", false
}

// claimSpec adds what a claim spec at p names: a claim it clones. It
// refuses a bound volume or a volume selector (the federation propagates
// no PersistentVolume: the copy could take another team's) and any other
// data source (nothing of those kinds is the federation's in a member).
func (refs *referenceList) claimSpec(spec *corev1.PersistentVolumeClaimSpec, p *field.Path) error {
	if spec.VolumeName != "" {
		return fmt.Errorf("%s: binds the member's PersistentVolume %q, which the federation never propagates (it could be another team's volume)",
			p.Child("volumeName"), spec.VolumeName)
	}
	if spec.Selector != nil {
		return fmt.Errorf("%s: picks the member's PersistentVolumes by label, which the federation never propagates (it could bind another team's volume)",
			p.Child("selector"))
	}
	if s := spec.DataSource; s != nil {
		if err := refs.dataSource(s.APIGroup, s.Kind, s.Name, nil, p.Child("dataSource")); err != nil {
			return err
		}
	}
	if s := spec.DataSourceRef; s != nil {
		if err := refs.dataSource(s.APIGroup, s.Kind, s.Name, s.Namespace, p.Child("dataSourceRef")); err != nil {
			return err
		}
	}
	return nil
}

func (refs *referenceList) dataSource(group *string, kind, name string, ns *string, p *field.Path) error {
	if kind != "PersistentVolumeClaim" || (group != nil && *group != "") {
		return notPropagated(p, kindOf(group, kind), name)
	}
	if ns != nil && *ns != "" {
		// A Reference is in the copy's namespace only.
		return fmt.Errorf("%s: the claim %q of namespace %q: a copy may name only claims of its own namespace", p.Child("namespace"), name, *ns)
	}
	refs.add(ClaimsResource, "PersistentVolumeClaim", name, p, false)
	return nil
}

// notPropagated refuses a copy naming, at p, an object of a kind the
// federation does not propagate: in a member it would be that cluster's
// own object of the name, whoever's.
func notPropagated(p *field.Path, kind, name string) error {
	return fmt.Errorf("%s: %s %q is not a kind the federation propagates, so the copy cannot name it", p, kind, name)
}

// kindOf writes a kind with its group, if any (snapshot.storage.k8s.io/VolumeSnapshot).
func kindOf(group *string, kind string) string {
	if group != nil && *group != "" {
		return *group + "/" + kind
	}
	return kind
}

// StatefulSetClaimPrefixes returns, for a StatefulSet copy, the prefix
// TEMPLATE-STATEFULSET- of the claims the member's StatefulSet controller
// makes from each of its volumeClaimTemplates (TEMPLATE-STATEFULSET-ORDINAL),
// nil for other kinds. The member's pods use whatever claim of such a name
// exists, so the controller refuses a StatefulSet copy where the member
// already holds one it did not make from our template.
func StatefulSetClaimPrefixes(copy *unstructured.Unstructured) []string {
	if copy.GetKind() != "StatefulSet" {
		return nil
	}
	templates, _, _ := unstructured.NestedSlice(copy.Object, "spec", "volumeClaimTemplates")
	var out []string
	for _, t := range templates {
		m, _ := t.(map[string]any)
		if name, _, _ := unstructured.NestedString(m, "metadata", "name"); name != "" {
			out = append(out, name+"-"+copy.GetName()+"-")
		}
	}
	return out
}

// referenceList gathers References, one per object: the first field
// naming it, Optional only if all are.
type referenceList struct {
	out   []Reference
	index map[schema.GroupResource]map[string]int
	// err is set past MaxReferences.
	err error
}

// MaxReferences is the most objects one copy may name: each may cost a
// live read of the member per write, so a copy naming thousands would
// cost the member that much per sync.
const MaxReferences = 100

func (refs *referenceList) add(resource schema.GroupVersionResource, kind, name string, p *field.Path, optional bool) {
	if name == "" || refs.err != nil {
		return
	}
	if refs.index == nil {
		refs.index = map[schema.GroupResource]map[string]int{}
	}
	byName := refs.index[resource.GroupResource()]
	if byName == nil {
		byName = map[string]int{}
		refs.index[resource.GroupResource()] = byName
	}
	if i, ok := byName[name]; ok {
		refs.out[i].Optional = refs.out[i].Optional && optional
		return
	}
	if len(refs.out) == MaxReferences {
		refs.err = fmt.Errorf("%s: names more than %d Secrets, ConfigMaps, claims and accounts, the most one object may name", p, MaxReferences)
		return
	}
	byName[name] = len(refs.out)
	refs.out = append(refs.out, Reference{Resource: resource, Kind: kind, Name: name, Field: p.String(), Optional: optional})
}

// decodeAt reads the object at path of copy into out as the member would
// (absent: the zero value); what does not fit is an error naming path.
func decodeAt(copy *unstructured.Unstructured, out any, path ...string) error {
	v, found, _ := unstructured.NestedFieldNoCopy(copy.Object, path...)
	if !found || v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: is a %T, not an object", strings.Join(path, "."), v)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, out); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(path, "."), err)
	}
	return nil
}
