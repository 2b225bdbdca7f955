package kubefed

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/utils/ptr"
)

// podCase is a pod spec (and pod annotations) the policy is tried on, and
// what its refusal must say ("" when allowed).
type podCase struct {
	name        string
	edit        func(*corev1.PodSpec)
	annotations map[string]string
	refused     string
}

// container edits the first container's securityContext.
func container(edit func(*corev1.SecurityContext)) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		if s.Containers[0].SecurityContext == nil {
			s.Containers[0].SecurityContext = &corev1.SecurityContext{}
		}
		edit(s.Containers[0].SecurityContext)
	}
}

// podLevel edits the pod's securityContext.
func podLevel(edit func(*corev1.PodSecurityContext)) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		if s.SecurityContext == nil {
			s.SecurityContext = &corev1.PodSecurityContext{}
		}
		edit(s.SecurityContext)
	}
}

// initContainer adds an init container with securityContext sc.
func initContainer(sc *corev1.SecurityContext) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		s.InitContainers = append(s.InitContainers, corev1.Container{Name: "i", Image: "i", SecurityContext: sc})
	}
}

// both applies edits in turn.
func both(edits ...func(*corev1.PodSpec)) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		for _, e := range edits {
			e(s)
		}
	}
}

// podsOf are a Pod, a Deployment, a CronJob and a PodTemplate asking for
// the pod of c, each with its own name.
func podsOf(c podCase, fedUser string) []request {
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}
	if c.edit != nil {
		c.edit(&spec)
	}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: c.annotations}, Spec: spec}
	objects := []struct {
		kind string
		gvr  schema.GroupVersionResource
		obj  runtime.Object
	}{
		{"Pod", schema.GroupVersionResource{Version: "v1", Resource: "pods"}, &corev1.Pod{ObjectMeta: template.ObjectMeta, Spec: spec}},
		{"Deployment", appsv1.SchemeGroupVersion.WithResource("deployments"), &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: template}}},
		{"CronJob", batchv1.SchemeGroupVersion.WithResource("cronjobs"),
			&batchv1.CronJob{Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template}}}}},
		{"PodTemplate", schema.GroupVersionResource{Version: "v1", Resource: "podtemplates"}, &corev1.PodTemplate{Template: template}},
	}
	var out []request
	for _, o := range objects {
		out = append(out, request{name: c.name + " (" + o.kind + ")", user: fedUser, op: admission.Create, resource: o.gvr, kind: o.kind,
			namespace: "team-a", objName: "x", obj: o.obj, refused: c.refused})
	}
	return out
}

// tryPods runs the cases on v, each on every kind of podsOf: one refusal
// saying what it must, or none.
func tryPods(t *testing.T, v validating.Validator, fedUser string, cases []podCase) {
	for _, c := range cases {
		for _, r := range podsOf(c, fedUser) {
			t.Run(r.name, func(t *testing.T) {
				refusals := decide(t, v, r)
				if r.refused == "" {
					assert.Empty(t, refusals)
					return
				}
				require.Len(t, refusals, 1, "one rule refuses")
				assert.Contains(t, refusals[0], `federation "fed" may not `+r.refused)
				assert.Contains(t, refusals[0], "(policy federation-fed)")
			})
		}
	}
}

func TestMemberPolicyPodSecurityBaseline(t *testing.T) {
	a := newMemberAccess("fed")
	fedUser := accountUsername(a.Account.Namespace, a.Account.Name)
	v := compile(t, a.Policy)
	seccomp := func(typ corev1.SeccompProfileType) *corev1.SeccompProfile { return &corev1.SeccompProfile{Type: typ} }
	appArmor := func(typ corev1.AppArmorProfileType) *corev1.AppArmorProfile {
		return &corev1.AppArmorProfile{Type: typ}
	}
	sysctls := func(names ...string) func(*corev1.PodSpec) {
		return podLevel(func(sc *corev1.PodSecurityContext) {
			for _, n := range names {
				sc.Sysctls = append(sc.Sysctls, corev1.Sysctl{Name: n, Value: "1"})
			}
		})
	}
	probe := func(h corev1.ProbeHandler) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) { s.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: h} }
	}
	tryPods(t, v, fedUser, []podCase{
		{name: "a plain pod"},
		{name: "a pod as baseline allows it", edit: both(
			func(s *corev1.PodSpec) {
				s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080}, {ContainerPort: 53, HostPort: 0}}
			},
			podLevel(func(sc *corev1.PodSecurityContext) {
				sc.SeccompProfile = seccomp(corev1.SeccompProfileTypeRuntimeDefault)
				sc.AppArmorProfile = appArmor(corev1.AppArmorProfileTypeRuntimeDefault)
				sc.SELinuxOptions = &corev1.SELinuxOptions{Type: "container_t", Level: "s0:c123,c456"}
				sc.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(false)}
			}),
			container(func(sc *corev1.SecurityContext) {
				sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("p.json")}
				sc.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("p")}
				sc.SELinuxOptions = &corev1.SELinuxOptions{Type: "container_init_t"}
				sc.ProcMount = ptr.To(corev1.DefaultProcMount)
			}),
			sysctls("net.ipv4.ip_local_port_range", "kernel.shm_rmid_forced", "net.ipv4.tcp_keepalive_probes"),
			probe(corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz"}}),
		), annotations: map[string]string{
			"container.apparmor.security.beta.kubernetes.io/c": "runtime/default",
			"container.apparmor.security.beta.kubernetes.io/i": "localhost/my-profile",
			"other": "unconfined",
		}},

		{name: "hostPort", edit: func(s *corev1.PodSpec) {
			s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 22, HostPort: 22}}
		},
			refused: "run pods with hostPort"},
		{name: "hostPort of an init container", edit: func(s *corev1.PodSpec) {
			s.InitContainers = []corev1.Container{{Name: "i", Image: "i", Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}}}
		}, refused: "run pods with hostPort"},
		{name: "hostNetwork", edit: func(s *corev1.PodSpec) { s.HostNetwork = true }, refused: "run pods with hostNetwork"},
		{name: "hostPath", edit: func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		}, refused: "run pods with hostPath volumes"},
		{name: "privileged", edit: container(func(sc *corev1.SecurityContext) { sc.Privileged = ptr.To(true) }), refused: "run privileged containers"},
		{name: "SYS_ADMIN", edit: container(func(sc *corev1.SecurityContext) {
			sc.Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}
		}),
			refused: "add capabilities beyond Pod Security baseline"},

		{name: "pod seccomp Unconfined", edit: podLevel(func(sc *corev1.PodSecurityContext) { sc.SeccompProfile = seccomp(corev1.SeccompProfileTypeUnconfined) }),
			refused: "run pods with seccompProfile type Unconfined"},
		{name: "container seccomp Unconfined", edit: container(func(sc *corev1.SecurityContext) { sc.SeccompProfile = seccomp(corev1.SeccompProfileTypeUnconfined) }),
			refused: "run pods with seccompProfile type Unconfined"},
		{name: "init container seccomp Unconfined", edit: initContainer(&corev1.SecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeUnconfined)}),
			refused: "run pods with seccompProfile type Unconfined"},

		{name: "pod SELinux spc_t", edit: podLevel(func(sc *corev1.PodSecurityContext) { sc.SELinuxOptions = &corev1.SELinuxOptions{Type: "spc_t"} }),
			refused: "run pods with seLinuxOptions"},
		{name: "container SELinux spc_t", edit: container(func(sc *corev1.SecurityContext) { sc.SELinuxOptions = &corev1.SELinuxOptions{Type: "spc_t"} }),
			refused: "run pods with seLinuxOptions"},
		{name: "SELinux user", edit: container(func(sc *corev1.SecurityContext) { sc.SELinuxOptions = &corev1.SELinuxOptions{User: "system_u"} }),
			refused: "run pods with seLinuxOptions"},
		{name: "SELinux role", edit: podLevel(func(sc *corev1.PodSecurityContext) { sc.SELinuxOptions = &corev1.SELinuxOptions{Role: "system_r"} }),
			refused: "run pods with seLinuxOptions"},
		{name: "SELinux container_engine_t", edit: container(func(sc *corev1.SecurityContext) {
			sc.SELinuxOptions = &corev1.SELinuxOptions{Type: "container_engine_t"}
		})},

		{name: "pod AppArmor Unconfined", edit: podLevel(func(sc *corev1.PodSecurityContext) {
			sc.AppArmorProfile = appArmor(corev1.AppArmorProfileTypeUnconfined)
		}),
			refused: "run pods with appArmorProfile type Unconfined"},
		{name: "container AppArmor Unconfined", edit: container(func(sc *corev1.SecurityContext) { sc.AppArmorProfile = appArmor(corev1.AppArmorProfileTypeUnconfined) }),
			refused: "run pods with appArmorProfile type Unconfined"},
		{name: "AppArmor annotation unconfined", annotations: map[string]string{"container.apparmor.security.beta.kubernetes.io/c": "unconfined"},
			refused: "run pods with a container.apparmor.security.beta.kubernetes.io annotation"},

		{name: "an unsafe sysctl", edit: sysctls("net.ipv4.ip_local_port_range", "kernel.msgmax"), refused: "run pods with sysctls outside Pod Security baseline's safe set"},
		{name: "net.core.somaxconn", edit: sysctls("net.core.somaxconn"), refused: "run pods with sysctls"},

		{name: "procMount Unmasked", edit: container(func(sc *corev1.SecurityContext) { sc.ProcMount = ptr.To(corev1.UnmaskedProcMount) }),
			refused: "run pods with procMount other than Default"},
		{name: "pod hostProcess", edit: podLevel(func(sc *corev1.PodSecurityContext) {
			sc.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}
		}), refused: "run pods with windowsOptions.hostProcess"},
		{name: "container hostProcess", edit: container(func(sc *corev1.SecurityContext) {
			sc.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}
		}), refused: "run pods with windowsOptions.hostProcess"},
		{name: "a probe on another host", edit: probe(corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "169.254.169.254", Path: "/"}}),
			refused: "run pods with probes or lifecycle handlers aimed at another host"},
		{name: "a preStop on another host", edit: func(s *corev1.PodSpec) {
			s.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Host: "10.0.0.1"}}}
		}, refused: "run pods with probes or lifecycle handlers aimed at another host"},
	})

	// Restricted is an option: baseline lets a root pod through.
	tryPods(t, v, fedUser, []podCase{{name: "a root pod under baseline", edit: both(
		container(func(sc *corev1.SecurityContext) {
			sc.RunAsUser = ptr.To[int64](0)
			sc.AllowPrivilegeEscalation = ptr.To(true)
		}),
		func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "n", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs", Path: "/"}}}}
		})}})
}

func TestMemberPolicyPodSecurityRestricted(t *testing.T) {
	a := newMemberAccess("fed")
	baseline := len(a.Policy.Spec.Validations)
	withPodSecurity(a, "fed", podSecurityRestricted)
	assert.Greater(t, len(a.Policy.Spec.Validations), baseline)
	assert.Equal(t, podSecurityRestricted, a.Policy.Annotations[podSecurityAnnotation], "recorded on the policy")
	for _, v := range a.Policy.Spec.Validations {
		assert.Equal(t, metav1.StatusReasonForbidden, *v.Reason)
	}
	fedUser := accountUsername(a.Account.Namespace, a.Account.Name)
	v := compile(t, a.Policy)

	// restricted is what a pod must say to pass.
	restricted := func(s *corev1.PodSpec) {
		s.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
		s.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_BIND_SERVICE"}}}
		s.Volumes = []corev1.Volume{
			{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}}},
			{Name: "e", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "p", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "p"}}},
		}
	}
	then := func(edits ...func(*corev1.PodSpec)) func(*corev1.PodSpec) {
		return both(append([]func(*corev1.PodSpec){restricted}, edits...)...)
	}
	restrictedInit := &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}

	tryPods(t, v, fedUser, []podCase{
		{name: "a restricted pod", edit: restricted},
		{name: "a restricted pod with an init container", edit: then(initContainer(restrictedInit))},
		{name: "runAsNonRoot and seccomp on every container", edit: then(
			podLevel(func(sc *corev1.PodSecurityContext) { sc.RunAsNonRoot, sc.SeccompProfile = nil, nil }),
			container(func(sc *corev1.SecurityContext) {
				sc.RunAsNonRoot = ptr.To(true)
				sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("p.json")}
			}))},
		{name: "no runAsNonRoot", edit: then(podLevel(func(sc *corev1.PodSecurityContext) { sc.RunAsNonRoot = nil })),
			refused: "run pods without runAsNonRoot: true on the pod or every container (Pod Security restricted)"},
		{name: "a container runAsNonRoot false", edit: then(container(func(sc *corev1.SecurityContext) { sc.RunAsNonRoot = ptr.To(false) })),
			refused: "run pods without runAsNonRoot: true"},
		{name: "pod runAsNonRoot false", edit: then(
			podLevel(func(sc *corev1.PodSecurityContext) { sc.RunAsNonRoot = ptr.To(false) }),
			container(func(sc *corev1.SecurityContext) { sc.RunAsNonRoot = ptr.To(true) })),
			refused: "run pods without runAsNonRoot: true"},
		{name: "pod runAsUser 0", edit: then(podLevel(func(sc *corev1.PodSecurityContext) { sc.RunAsUser = ptr.To[int64](0) })),
			refused: "run pods with runAsUser 0 (Pod Security restricted)"},
		{name: "container runAsUser 0", edit: then(container(func(sc *corev1.SecurityContext) { sc.RunAsUser = ptr.To[int64](0) })),
			refused: "run pods with runAsUser 0"},
		{name: "runAsUser 1000", edit: then(container(func(sc *corev1.SecurityContext) { sc.RunAsUser = ptr.To[int64](1000) }))},
		{name: "allowPrivilegeEscalation unset", edit: then(container(func(sc *corev1.SecurityContext) { sc.AllowPrivilegeEscalation = nil })),
			refused: "run pods without allowPrivilegeEscalation: false on every container (Pod Security restricted)"},
		{name: "an init container allowPrivilegeEscalation true", edit: then(initContainer(&corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(true), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}})),
			refused: "run pods without allowPrivilegeEscalation: false"},
		{name: "not dropping ALL", edit: then(container(func(sc *corev1.SecurityContext) { sc.Capabilities.Drop = []corev1.Capability{"NET_RAW"} })),
			refused: "run pods without dropping ALL capabilities in every container (Pod Security restricted)"},
		{name: "adding CHOWN", edit: then(container(func(sc *corev1.SecurityContext) { sc.Capabilities.Add = []corev1.Capability{"CHOWN"} })),
			refused: "run pods adding capabilities other than NET_BIND_SERVICE (Pod Security restricted)"},
		{name: "no seccomp", edit: then(podLevel(func(sc *corev1.PodSecurityContext) { sc.SeccompProfile = nil })),
			refused: "run pods without seccompProfile type RuntimeDefault or Localhost on the pod or every container (Pod Security restricted)"},
		{name: "an nfs volume", edit: then(func(s *corev1.PodSpec) {
			s.Volumes = append(s.Volumes, corev1.Volume{Name: "n", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs", Path: "/"}}})
		}), refused: "run pods with volumes other than configMap, csi, downwardAPI, emptyDir, ephemeral, image, persistentVolumeClaim, projected, secret (Pod Security restricted)"},
		{name: "a Windows pod", edit: then(
			func(s *corev1.PodSpec) { s.OS = &corev1.PodOS{Name: corev1.Windows} },
			podLevel(func(sc *corev1.PodSecurityContext) { sc.SeccompProfile = nil }),
			container(func(sc *corev1.SecurityContext) { sc.AllowPrivilegeEscalation, sc.Capabilities = nil, nil }))},
	})

	// A plain pod says nothing of what restricted asks.
	for _, r := range podsOf(podCase{name: "a plain pod"}, fedUser) {
		refusals := decide(t, v, r)
		require.Len(t, refusals, 4, r.name)
		for i, want := range []string{"without runAsNonRoot", "without allowPrivilegeEscalation", "without dropping ALL", "without seccompProfile"} {
			assert.Contains(t, refusals[i], want, r.name)
		}
	}

	// Not pods: nothing to say.
	for _, r := range []request{
		{name: "a ConfigMap", user: fedUser, op: admission.Create, resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, kind: "ConfigMap",
			namespace: "team-a", objName: "x", obj: &corev1.ConfigMap{}},
		{name: "deleting a Deployment", user: fedUser, op: admission.Delete, resource: appsv1.SchemeGroupVersion.WithResource("deployments"), kind: "Deployment",
			namespace: "team-a", objName: "x", old: &appsv1.Deployment{}},
	} {
		assert.Empty(t, decide(t, v, r), r.name)
	}
}

func TestPodSecurityFlag(t *testing.T) {
	require.NoError(t, validatePodSecurity("baseline"))
	require.NoError(t, validatePodSecurity("restricted"))
	for _, bad := range []string{"", "privileged", "Restricted", "strict"} {
		err := validatePodSecurity(bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "--pod-security")
		assert.Contains(t, err.Error(), "baseline or restricted")
	}
	a := newMemberAccess("fed")
	n := len(a.Policy.Spec.Validations)
	withPodSecurity(a, "fed", podSecurityBaseline)
	assert.Len(t, a.Policy.Spec.Validations, n, "baseline is the policy as it is")
	assert.Equal(t, podSecurityBaseline, a.Policy.Annotations[podSecurityAnnotation])
	assert.Empty(t, newMemberAccess("fed").PolicyBinding.Annotations)
}
