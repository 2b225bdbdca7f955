package federationworkloads

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/apis/apps"
	"k8s.io/kubernetes/pkg/apis/batch"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/networking"
	"k8s.io/utils/ptr"
)

var local = map[string]string{"federation.kubernetes.io/local": "true"}

// newPlugin returns the plugin allowing cidrs, with the service accounts
// team-a/app, team-a/kept (local) and team-b/app at the federation.
func newPlugin(t *testing.T, cidrs ...string) *Plugin {
	t.Helper()
	client := fake.NewSimpleClientset(
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "app"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "kept", Labels: local}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "app"}},
	)
	nets, err := ParseCIDRs(cidrs)
	require.NoError(t, err)
	p := New(nets)
	p.SetExternalKubeInformerFactory(informers.NewSharedInformerFactory(client, 0))
	p.SetExternalKubeClientSet(client)
	require.NoError(t, p.ValidateInitialization())
	return p
}

// validate admits obj, as an update of old unless old is nil (of any
// type: the cases hold typed pointers).
func validate(p *Plugin, resource schema.GroupVersionResource, subresource, ns string, obj, old runtime.Object) error {
	if old != nil && reflect.ValueOf(old).IsNil() {
		old = nil
	}
	op := admission.Create
	if old != nil {
		op = admission.Update
	}
	attrs := admission.NewAttributesRecord(obj, old, schema.GroupVersionKind{Kind: "Thing"}, ns, "x", resource, subresource, op, nil, false,
		&user.DefaultInfo{Name: "alice"})
	return p.Validate(context.Background(), attrs, nil)
}

// verdict asserts that err admits (want empty) or is a 422 holding each
// of want.
func verdict(t *testing.T, err error, want ...string) {
	t.Helper()
	if len(want) == 0 {
		assert.NoError(t, err)
		return
	}
	require.Error(t, err)
	assert.True(t, apierrors.IsInvalid(err), "want a 422, got %v", err)
	for _, w := range want {
		assert.Contains(t, err.Error(), w)
	}
}

// wants is want, or nothing when it is empty (the object is admitted).
func wants(want string) []string {
	if want == "" {
		return nil
	}
	return []string{want}
}

func TestValidateInitialization(t *testing.T) {
	assert.ErrorContains(t, New(nil).ValidateInitialization(), PluginName)
}

// workload is one kind with a pod spec, in one group and version served.
type workload struct {
	resource schema.GroupVersionResource
	make     func(serviceAccount string, labels map[string]string) runtime.Object
	path     string
}

func workloads() []workload {
	meta := func(labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "team-a", Name: "x", Labels: labels}
	}
	template := func(sa string) api.PodTemplateSpec {
		return api.PodTemplateSpec{Spec: api.PodSpec{ServiceAccountName: sa}}
	}
	deployment := func(sa string, l map[string]string) runtime.Object {
		return &apps.Deployment{ObjectMeta: meta(l), Spec: apps.DeploymentSpec{Template: template(sa)}}
	}
	replicaSet := func(sa string, l map[string]string) runtime.Object {
		return &apps.ReplicaSet{ObjectMeta: meta(l), Spec: apps.ReplicaSetSpec{Template: template(sa)}}
	}
	daemonSet := func(sa string, l map[string]string) runtime.Object {
		return &apps.DaemonSet{ObjectMeta: meta(l), Spec: apps.DaemonSetSpec{Template: template(sa)}}
	}
	const tmpl = "spec.template.spec.serviceAccountName"
	return []workload{
		{api.SchemeGroupVersion.WithResource("pods"), func(sa string, l map[string]string) runtime.Object {
			return &api.Pod{ObjectMeta: meta(l), Spec: api.PodSpec{ServiceAccountName: sa}}
		}, "spec.serviceAccountName"},
		{api.SchemeGroupVersion.WithResource("replicationcontrollers"), func(sa string, l map[string]string) runtime.Object {
			t := template(sa)
			return &api.ReplicationController{ObjectMeta: meta(l), Spec: api.ReplicationControllerSpec{Template: &t}}
		}, tmpl},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, deployment, tmpl},
		{schema.GroupVersionResource{Group: "extensions", Version: "v1beta1", Resource: "deployments"}, deployment, tmpl},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, replicaSet, tmpl},
		{schema.GroupVersionResource{Group: "extensions", Version: "v1beta1", Resource: "replicasets"}, replicaSet, tmpl},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, daemonSet, tmpl},
		{schema.GroupVersionResource{Group: "extensions", Version: "v1beta1", Resource: "daemonsets"}, daemonSet, tmpl},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, func(sa string, l map[string]string) runtime.Object {
			return &apps.StatefulSet{ObjectMeta: meta(l), Spec: apps.StatefulSetSpec{Template: template(sa)}}
		}, tmpl},
		{schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, func(sa string, l map[string]string) runtime.Object {
			return &batch.Job{ObjectMeta: meta(l), Spec: batch.JobSpec{Template: template(sa)}}
		}, tmpl},
		{schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}, func(sa string, l map[string]string) runtime.Object {
			return &batch.CronJob{ObjectMeta: meta(l), Spec: batch.CronJobSpec{JobTemplate: batch.JobTemplateSpec{Spec: batch.JobSpec{Template: template(sa)}}}}
		}, "spec.jobTemplate.spec.template.spec.serviceAccountName"},
	}
}

func TestPodSpecServiceAccount(t *testing.T) {
	p := newPlugin(t)
	for _, w := range workloads() {
		cases := []struct {
			name        string
			ns          string
			sa          string
			labels      map[string]string
			old         runtime.Object
			subresource string
			want        string // in the 422, or "" for allowed
		}{
			{name: "no account", ns: "team-a"},
			{name: "the default account", ns: "team-a", sa: "default"},
			{name: "an account the federation propagates", ns: "team-a", sa: "app"},
			{name: "an account that does not exist", ns: "team-a", sa: "ghost",
				want: `no ServiceAccount "ghost" exists at the federation in the namespace "team-a"`},
			{name: "an account of another namespace's name only", ns: "team-c", sa: "app",
				want: `no ServiceAccount "app" exists at the federation in the namespace "team-c"`},
			{name: "a local account", ns: "team-a", sa: "kept",
				want: `the ServiceAccount "kept" is labelled federation.kubernetes.io/local=true`},
			{name: "a local workload", ns: "team-a", sa: "ghost", labels: local},
			{name: "in a never-propagated namespace", ns: "kube-system", sa: "ghost"},
			{name: "an update that keeps the account", ns: "team-a", sa: "ghost", old: w.make("ghost", nil)},
			{name: "an update that changes it", ns: "team-a", sa: "ghost", old: w.make("app", nil),
				want: `no ServiceAccount "ghost"`},
			{name: "an update that makes a local workload propagated", ns: "team-a", sa: "ghost", old: w.make("ghost", local),
				want: `no ServiceAccount "ghost"`},
			{name: "a status update", ns: "team-a", sa: "ghost", old: w.make("app", nil), subresource: "status"},
		}
		for _, c := range cases {
			t.Run(w.resource.String()+"/"+c.name, func(t *testing.T) {
				err := validate(p, w.resource, c.subresource, c.ns, w.make(c.sa, c.labels), c.old)
				if c.want == "" {
					verdict(t, err)
					return
				}
				verdict(t, err, w.path+": Invalid value: \""+c.sa+"\": "+c.want)
			})
		}
	}
}

func TestExternalIPs(t *testing.T) {
	service := func(labels map[string]string, ips ...string) *api.Service {
		return &api.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "x", Labels: labels}, Spec: api.ServiceSpec{ExternalIPs: ips}}
	}
	cases := []struct {
		name  string
		cidrs []string
		obj   *api.Service
		old   *api.Service
		want  []string // in the 422, or none for allowed
	}{
		{name: "none", obj: service(nil)},
		{name: "any, by default", obj: service(nil, "8.8.8.8"),
			want: []string{"spec.externalIPs[0]: Forbidden: 8.8.8.8 is not in the external IP ranges the federation allows (none)", "--allowed-service-external-ip-cidrs"}},
		{name: "the member's own kubernetes Service address", cidrs: []string{"192.0.2.0/24"}, obj: service(nil, "192.0.2.1", "10.96.0.1"),
			want: []string{"spec.externalIPs[1]: Forbidden: 10.96.0.1 is not in the external IP ranges the federation allows (192.0.2.0/24)"}},
		{name: "inside an allowed CIDR", cidrs: []string{"198.51.100.0/24", "192.0.2.0/24"}, obj: service(nil, "192.0.2.1", "198.51.100.9")},
		{name: "IPv6 inside an allowed CIDR", cidrs: []string{"2001:db8::/64"}, obj: service(nil, "2001:db8::5")},
		{name: "IPv6 outside", cidrs: []string{"192.0.2.0/24"}, obj: service(nil, "2001:db8::5"),
			want: []string{"spec.externalIPs[0]: Forbidden: 2001:db8::5 is not in"}},
		{name: "an update that keeps an address the Service had", obj: service(nil, "8.8.8.8"), old: service(nil, "8.8.8.8", "8.8.4.4")},
		{name: "an update that adds one", obj: service(nil, "8.8.8.8", "1.1.1.1"), old: service(nil, "8.8.8.8"),
			want: []string{"spec.externalIPs[1]: Forbidden: 1.1.1.1"}},
		{name: "an update that makes a local Service propagated", obj: service(nil, "8.8.8.8"), old: service(local, "8.8.8.8"),
			want: []string{"spec.externalIPs[0]: Forbidden: 8.8.8.8"}},
		{name: "a local Service", obj: service(local, "8.8.8.8")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := validate(newPlugin(t, c.cidrs...), api.SchemeGroupVersion.WithResource("services"), "", "team-a", c.obj, c.old)
			verdict(t, err, c.want...)
		})
	}
}

func TestParseCIDRs(t *testing.T) {
	_, err := ParseCIDRs([]string{"192.0.2.0/24", "8.8.8.8"})
	assert.EqualError(t, err, `"8.8.8.8": not a CIDR`)
}

func TestClaims(t *testing.T) {
	claim := func(labels map[string]string, f func(*api.PersistentVolumeClaimSpec)) *api.PersistentVolumeClaim {
		c := &api.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "x", Labels: labels}}
		f(&c.Spec)
		return c
	}
	bound := func(s *api.PersistentVolumeClaimSpec) { s.VolumeName = "pv-1" }
	snapshot := func(s *api.PersistentVolumeClaimSpec) {
		s.DataSource = &api.TypedLocalObjectReference{APIGroup: ptr.To("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: "nightly"}
	}
	clone := func(s *api.PersistentVolumeClaimSpec) {
		s.DataSource = &api.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "golden"}
		s.DataSourceRef = &api.TypedObjectReference{APIGroup: ptr.To(""), Kind: "PersistentVolumeClaim", Name: "golden"}
	}
	cases := []struct {
		name string
		obj  *api.PersistentVolumeClaim
		old  *api.PersistentVolumeClaim
		want []string // in the 422, or none for allowed
	}{
		{name: "a plain claim", obj: claim(nil, func(s *api.PersistentVolumeClaimSpec) { s.StorageClassName = ptr.To("fast") })},
		{name: "a clone of a claim", obj: claim(nil, clone)},
		{name: "a bound claim", obj: claim(nil, bound),
			want: []string{`spec.volumeName: Invalid value: "pv-1": the federation propagates no PersistentVolume`}},
		{name: "a claim of a snapshot", obj: claim(nil, snapshot),
			want: []string{`spec.dataSource: Invalid value: "snapshot.storage.k8s.io/VolumeSnapshot nightly": the federation propagates only PersistentVolumeClaims`}},
		{name: "a claim of a populator", obj: claim(nil, func(s *api.PersistentVolumeClaimSpec) {
			s.DataSourceRef = &api.TypedObjectReference{APIGroup: ptr.To("hello.example.com"), Kind: "Hello", Name: "h"}
		}), want: []string{`spec.dataSourceRef: Invalid value: "hello.example.com/Hello h"`}},
		{name: "a claim of another namespace's claim", obj: claim(nil, func(s *api.PersistentVolumeClaimSpec) {
			s.DataSourceRef = &api.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "golden", Namespace: ptr.To("team-b")}
		}), want: []string{`spec.dataSourceRef: Invalid value: "PersistentVolumeClaim golden"`, "a claim of another namespace neither"}},
		{name: "both at once", obj: claim(nil, func(s *api.PersistentVolumeClaimSpec) { bound(s); snapshot(s) }),
			want: []string{"spec.volumeName: Invalid value", "spec.dataSource: Invalid value"}},
		{name: "a claim picking volumes by label", obj: claim(nil, func(s *api.PersistentVolumeClaimSpec) {
			s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}}
		}), want: []string{`spec.selector: Invalid value: "team=b": the federation propagates no PersistentVolume`, "use a storage class"}},
		{name: "a local claim", obj: claim(local, bound)},
		{name: "an update that keeps them", obj: claim(nil, func(s *api.PersistentVolumeClaimSpec) { bound(s); snapshot(s) }),
			old: claim(nil, func(s *api.PersistentVolumeClaimSpec) { bound(s); snapshot(s) })},
		{name: "an update that binds", obj: claim(nil, bound), old: claim(nil, func(*api.PersistentVolumeClaimSpec) {}),
			want: []string{"spec.volumeName: Invalid value"}},
		{name: "an update that makes a local claim propagated", obj: claim(nil, snapshot), old: claim(local, snapshot),
			want: []string{"spec.dataSource: Invalid value"}},
	}
	p := newPlugin(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := validate(p, api.SchemeGroupVersion.WithResource("persistentvolumeclaims"), "", "team-a", c.obj, c.old)
			verdict(t, err, c.want...)
		})
	}
}

func TestIngressResourceBackends(t *testing.T) {
	bucket := func() *networking.IngressBackend {
		return &networking.IngressBackend{Resource: &api.TypedLocalObjectReference{APIGroup: ptr.To("k8s.example.com"), Kind: "StorageBucket", Name: "b"}}
	}
	service := networking.IngressBackend{Service: &networking.IngressServiceBackend{Name: "web", Port: networking.ServiceBackendPort{Number: 80}}}
	ingress := func(labels map[string]string, defaultBackend *networking.IngressBackend, paths ...networking.IngressBackend) *networking.Ingress {
		i := &networking.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "x", Labels: labels},
			Spec: networking.IngressSpec{DefaultBackend: defaultBackend, Rules: []networking.IngressRule{{Host: "a.example.com"}}}}
		if len(paths) > 0 {
			http := &networking.HTTPIngressRuleValue{}
			for _, b := range paths {
				http.Paths = append(http.Paths, networking.HTTPIngressPath{Path: "/", Backend: b})
			}
			i.Spec.Rules = append(i.Spec.Rules, networking.IngressRule{IngressRuleValue: networking.IngressRuleValue{HTTP: http}})
		}
		return i
	}
	cases := []struct {
		name string
		obj  *networking.Ingress
		old  *networking.Ingress
		want string // in the 422, or "" for allowed
	}{
		{name: "service backends", obj: ingress(nil, &service, service)},
		{name: "a default resource backend", obj: ingress(nil, bucket()),
			want: `spec.defaultBackend.resource: Invalid value: "k8s.example.com/StorageBucket b": the federation propagates no resource backends`},
		{name: "a path's resource backend", obj: ingress(nil, nil, service, *bucket()),
			want: `spec.rules[1].http.paths[1].backend.resource: Invalid value: "k8s.example.com/StorageBucket b"`},
		{name: "a local Ingress", obj: ingress(local, bucket())},
		{name: "an update that keeps it", obj: ingress(nil, nil, *bucket()), old: ingress(nil, bucket())},
		{name: "an update that adds it", obj: ingress(nil, nil, *bucket()), old: ingress(nil, nil, service),
			want: `spec.rules[1].http.paths[0].backend.resource`},
		{name: "an update that makes a local Ingress propagated", obj: ingress(nil, bucket()), old: ingress(local, bucket()),
			want: `spec.defaultBackend.resource`},
	}
	p := newPlugin(t)
	for _, resource := range []schema.GroupVersionResource{
		{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"},
		{Group: "extensions", Version: "v1beta1", Resource: "ingresses"},
	} {
		for _, c := range cases {
			t.Run(resource.String()+"/"+c.name, func(t *testing.T) {
				err := validate(p, resource, "", "team-a", c.obj, c.old)
				verdict(t, err, wants(c.want)...)
			})
		}
	}
}

func TestPodClaims(t *testing.T) {
	ephemeral := func(f func(*api.PersistentVolumeClaimSpec)) func(*api.PodSpec) {
		return func(s *api.PodSpec) {
			t := &api.PersistentVolumeClaimTemplate{}
			f(&t.Spec)
			s.Volumes = append(s.Volumes, api.Volume{Name: "scratch", VolumeSource: api.VolumeSource{Ephemeral: &api.EphemeralVolumeSource{VolumeClaimTemplate: t}}})
		}
	}
	cases := []struct {
		name     string
		edit     func(*api.PodSpec)
		old      func(*api.PodSpec) // nil: a create
		want     string             // after the pod spec's path, or "" for allowed
		wantMore string
	}{
		{name: "an ephemeral volume of a storage class", edit: ephemeral(func(s *api.PersistentVolumeClaimSpec) { s.StorageClassName = ptr.To("fast") })},
		{name: "an ephemeral volume bound to a volume", edit: ephemeral(func(s *api.PersistentVolumeClaimSpec) { s.VolumeName = "pv-1" }),
			want: `volumes[0].ephemeral.volumeClaimTemplate.spec.volumeName: Invalid value: "pv-1"`},
		{name: "an ephemeral volume picking volumes", edit: ephemeral(func(s *api.PersistentVolumeClaimSpec) {
			s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}}
		}), want: `volumes[0].ephemeral.volumeClaimTemplate.spec.selector: Invalid value: "team=b"`},
		{name: "a ResourceClaim", edit: func(s *api.PodSpec) {
			s.ResourceClaims = []api.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("team-b-gpu")}}
		}, want: `resourceClaims[0].resourceClaimName: Invalid value: "team-b-gpu": the federation propagates no ResourceClaim`},
		{name: "a ResourceClaimTemplate", edit: func(s *api.PodSpec) {
			s.ResourceClaims = []api.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("gpus")}}
		}, want: `resourceClaims[0].resourceClaimTemplateName: Invalid value: "gpus": the federation propagates no ResourceClaimTemplate`},
		{name: "a PodGroup", edit: func(s *api.PodSpec) { s.SchedulingGroup = &api.PodSchedulingGroup{PodGroupName: ptr.To("batch")} },
			want: `schedulingGroup.podGroupName: Invalid value: "batch": the federation propagates no PodGroup`},
		{name: "an update that keeps them", edit: func(s *api.PodSpec) {
			s.ResourceClaims = []api.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("team-b-gpu")}}
			ephemeral(func(s *api.PersistentVolumeClaimSpec) { s.VolumeName = "pv-1" })(s)
		}, old: func(s *api.PodSpec) {
			s.ResourceClaims = []api.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("team-b-gpu")}}
			ephemeral(func(s *api.PersistentVolumeClaimSpec) { s.VolumeName = "pv-1" })(s)
		}},
		{name: "an update that changes them", edit: func(s *api.PodSpec) {
			s.ResourceClaims = []api.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("other")}}
			ephemeral(func(s *api.PersistentVolumeClaimSpec) { s.VolumeName = "pv-2" })(s)
		}, old: func(s *api.PodSpec) {
			s.ResourceClaims = []api.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("team-b-gpu")}}
			ephemeral(func(s *api.PersistentVolumeClaimSpec) { s.VolumeName = "pv-1" })(s)
		}, want: `resourceClaims[0].resourceClaimName: Invalid value: "other"`, wantMore: `volumeClaimTemplate.spec.volumeName: Invalid value: "pv-2"`},
	}
	p := newPlugin(t)
	for _, w := range workloads() {
		for _, c := range cases {
			t.Run(w.resource.String()+"/"+c.name, func(t *testing.T) {
				obj := w.make("", nil)
				spec, path := podSpec(obj)
				c.edit(spec)
				var old runtime.Object
				if c.old != nil {
					old = w.make("", nil)
					oldSpec, _ := podSpec(old)
					c.old(oldSpec)
				}
				err := validate(p, w.resource, "", "team-a", obj, old)
				if c.want == "" {
					verdict(t, err)
					return
				}
				want := []string{path.String() + "." + c.want}
				if c.wantMore != "" {
					want = append(want, c.wantMore)
				}
				verdict(t, err, want...)
			})
		}
	}
}

func TestStatefulSetClaimTemplates(t *testing.T) {
	sts := func(f func(*api.PersistentVolumeClaimSpec)) *apps.StatefulSet {
		s := &apps.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "db"}}
		s.Spec.VolumeClaimTemplates = []api.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
		f(&s.Spec.VolumeClaimTemplates[0].Spec)
		return s
	}
	picking := func(s *api.PersistentVolumeClaimSpec) {
		s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}}
	}
	resource := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	p := newPlugin(t)
	verdict(t, validate(p, resource, "", "team-a", sts(func(s *api.PersistentVolumeClaimSpec) { s.StorageClassName = ptr.To("fast") }), nil))
	verdict(t, validate(p, resource, "", "team-a", sts(picking), nil), `spec.volumeClaimTemplates[0].spec.selector: Invalid value: "team=b"`)
	verdict(t, validate(p, resource, "", "team-a", sts(func(s *api.PersistentVolumeClaimSpec) { s.VolumeName = "pv-1" }), nil),
		`spec.volumeClaimTemplates[0].spec.volumeName: Invalid value: "pv-1"`)
	verdict(t, validate(p, resource, "", "team-a", sts(picking), sts(picking)))
}

func TestExternalNames(t *testing.T) {
	service := func(typ api.ServiceType, name string, labels map[string]string) *api.Service {
		return &api.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "x", Labels: labels},
			Spec: api.ServiceSpec{Type: typ, ExternalName: name}}
	}
	alias := api.ServiceTypeExternalName
	cases := []struct {
		name string
		obj  *api.Service
		old  *api.Service
		want string // in the 422, or "" for allowed
	}{
		{name: "outside the cluster", obj: service(alias, "db.example.com", nil)},
		{name: "a Service of its namespace", obj: service(alias, "web.team-a.svc.cluster.local", nil)},
		{name: "a Service of another namespace", obj: service(alias, "payments.team-b.svc.cluster.local", nil),
			want: `spec.externalName: Invalid value: "payments.team-b.svc.cluster.local": names the Service "payments" of namespace "team-b"`},
		{name: "a headless Service's pod of another namespace", obj: service(alias, "db-0.db.Team-B.svc.", nil),
			want: `names the Service "db" of namespace "team-b"`},
		{name: "a relative two-label name is read as outside", obj: service(alias, "example.com", nil)},
		{name: "one label", obj: service(alias, "payments", nil),
			want: `spec.externalName: Invalid value: "payments": is one label, which each reader resolves`},
		{name: "an absolute two-label name", obj: service(alias, "payments.team-b.", nil)},
		{name: "a local Service", obj: service(alias, "payments.team-b.svc", local)},
		{name: "an update that keeps it", obj: service(alias, "payments.team-b.svc", nil), old: service(alias, "payments.team-b.svc", nil)},
		{name: "an update that makes it an alias", obj: service(alias, "payments.team-b.svc", nil), old: service(api.ServiceTypeClusterIP, "payments.team-b.svc", nil),
			want: `spec.externalName`},
	}
	p := newPlugin(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := validate(p, api.SchemeGroupVersion.WithResource("services"), "", "team-a", c.obj, c.old)
			verdict(t, err, wants(c.want)...)
		})
	}
}
