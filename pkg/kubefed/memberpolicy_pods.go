package kubefed

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The member policy holds every pod the federation asks for, and every pod
// template, to Pod Security baseline (or restricted, `kubefed join
// --pod-security=restricted`), whatever the Pod Security labels of the
// namespace: a namespace the federation was let into need not have any.
// The rules follow the Pod Security Standards
// (https://kubernetes.io/docs/concepts/security/pod-security-standards/)
// as k8s.io/pod-security-admission checks them, on the oldest member the
// policy serves (Kubernetes 1.30): its safe sysctls, and no exception for
// pods in a user namespace (hostUsers: false).

// Pod Security levels of --pod-security.
const (
	podSecurityBaseline   = "baseline"
	podSecurityRestricted = "restricted"
)

// podSecurityAnnotation records on the member's policy the level it
// enforces.
const podSecurityAnnotation = "federation.kubernetes.io/pod-security"

// baselineCapabilities are the capabilities Pod Security's baseline level
// lets a container add.
var baselineCapabilities = []string{
	"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}

// baselineSysctls are the sysctls baseline deems safe (namespaced, isolated
// from other pods): those of Kubernetes 1.29 to 1.31.
var baselineSysctls = []string{
	"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
	"net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
	"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
	"net.ipv4.tcp_keepalive_probes",
}

// baselineSELinuxTypes are the SELinux types baseline lets a pod ask for
// ("" is the runtime's default).
var baselineSELinuxTypes = []string{"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}

// restrictedVolumes are the volume sources restricted allows (image since
// Kubernetes 1.33).
var restrictedVolumes = []string{"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image", "persistentVolumeClaim", "projected", "secret"}

// allowedProfiles are the seccomp and AppArmor profile types a pod may ask
// for: not Unconfined.
var allowedProfiles = []string{"RuntimeDefault", "Localhost"}

// templateKinds are the kinds whose spec.template is a pod template.
var templateKinds = []string{"Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job", "ReplicationController"}

// podVariables name the pod a request asks for: template is a Pod, a pod
// template (also a PodTemplate's and a CronJob's job template's), with
// its metadata and spec; pod its spec, podAnnotations its annotations,
// containers all its containers; each empty for anything else and for
// deletions. windows is whether the pod runs on Windows, where restricted
// does not check what Linux alone has.
var podVariables = []admissionregistrationv1.Variable{
	{Name: "template", Expression: `object == null ? {} :
request.kind.kind == 'Pod' ? object :
request.kind.kind == 'PodTemplate' ? (has(object.template) ? object.template : {}) :
!has(object.spec) ? {} :
request.kind.kind == 'CronJob' ? (has(object.spec.jobTemplate) && has(object.spec.jobTemplate.spec) && has(object.spec.jobTemplate.spec.template) ? object.spec.jobTemplate.spec.template : {}) :
request.kind.kind in ` + celList(templateKinds) + ` && has(object.spec.template) ? object.spec.template : {}`},
	{Name: "pod", Expression: "has(variables.template.spec) ? variables.template.spec : {}"},
	{Name: "podAnnotations", Expression: "has(variables.template.metadata) && has(variables.template.metadata.annotations) ? variables.template.metadata.annotations : {}"},
	// (null, not absent, in an object with no containers at all.)
	{Name: "containers", Expression: `(has(variables.pod.containers) && variables.pod.containers != null ? variables.pod.containers : []) +
(has(variables.pod.initContainers) && variables.pod.initContainers != null ? variables.pod.initContainers : []) +
(has(variables.pod.ephemeralContainers) && variables.pod.ephemeralContainers != null ? variables.pod.ephemeralContainers : [])`},
	{Name: "windows", Expression: "has(variables.pod.os) && has(variables.pod.os.name) && variables.pod.os.name == 'windows'"},
}

// celSet is the CEL test that obj.path is set, each step of it.
func celSet(obj string, path ...string) string {
	tests := make([]string, len(path))
	for i := range path {
		tests[i] = "has(" + obj + "." + strings.Join(path[:i+1], ".") + ")"
	}
	return "(" + strings.Join(tests, " && ") + ")"
}

// celField is obj.path in CEL.
func celField(obj string, path ...string) string { return obj + "." + strings.Join(path, ".") }

// podAndContainers is the CEL test that the pod's and every container's
// securityContext.path, where set, is ok (a CEL predicate of the value).
func podAndContainers(ok func(value string) string, path ...string) string {
	sc := append([]string{"securityContext"}, path...)
	return fmt.Sprintf("!(%s && !(%s)) && variables.containers.all(c, !%s || (%s))",
		celSet("variables.pod", sc...), ok(celField("variables.pod", sc...)), celSet("c", sc...), ok(celField("c", sc...)))
}

// containersAll is the CEL test that every container satisfies test (of c).
func containersAll(test string) string { return "variables.containers.all(c, " + test + ")" }

// notWindows exempts Windows pods from a restricted check, as Pod Security does.
func notWindows(test string) string { return "variables.windows || " + test }

// podSecurityValidations hold pods and pod templates to Pod Security
// baseline, one validation (and message) per control.
func podSecurityValidations(refused func(string) string) []admissionregistrationv1.Validation {
	in := func(list []string) func(string) string {
		return func(v string) string { return v + " in " + celList(list) }
	}
	seLinux := func(o string) string {
		return fmt.Sprintf("(!has(%s.type) || %s.type in %s) && (!has(%s.user) || %s.user == '') && (!has(%s.role) || %s.role == '')",
			o, o, celList(baselineSELinuxTypes), o, o, o, o)
	}
	return []admissionregistrationv1.Validation{
		{Expression: "!(has(variables.pod.hostNetwork) && variables.pod.hostNetwork)", Message: refused("run pods with hostNetwork")},
		{Expression: "!(has(variables.pod.hostPID) && variables.pod.hostPID)", Message: refused("run pods with hostPID")},
		{Expression: "!(has(variables.pod.hostIPC) && variables.pod.hostIPC)", Message: refused("run pods with hostIPC")},
		{Expression: "!has(variables.pod.volumes) || variables.pod.volumes.all(v, !has(v.hostPath))", Message: refused("run pods with hostPath volumes")},
		{
			Expression: containersAll("!" + celSet("c", "securityContext", "privileged") + " || !c.securityContext.privileged"),
			Message:    refused("run privileged containers"),
		},
		{
			Expression: containersAll("!" + celSet("c", "securityContext", "capabilities", "add") + " || c.securityContext.capabilities.add.all(cap, cap in " + celList(baselineCapabilities) + ")"),
			Message:    refused("add capabilities beyond Pod Security baseline (" + strings.Join(baselineCapabilities, ", ") + ")"),
		},
		{
			Expression: containersAll("!has(c.ports) || c.ports.all(p, !has(p.hostPort) || p.hostPort == 0)"),
			Message:    refused("run pods with hostPort (containers[].ports[].hostPort)"),
		},
		{
			Expression: podAndContainers(in(allowedProfiles), "seccompProfile", "type"),
			Message:    refused("run pods with seccompProfile type Unconfined (only RuntimeDefault or Localhost)"),
		},
		{
			Expression: podAndContainers(seLinux, "seLinuxOptions"),
			Message: refused("run pods with seLinuxOptions of a type other than " + strings.Join(baselineSELinuxTypes[1:], ", ") +
				", or with a user or role"),
		},
		{
			Expression: podAndContainers(in(allowedProfiles), "appArmorProfile", "type"),
			Message:    refused("run pods with appArmorProfile type Unconfined (only RuntimeDefault or Localhost)"),
		},
		{
			// Kubernetes before 1.30 only read the annotation; it still does.
			Expression: "variables.podAnnotations.all(k, !k.startsWith('container.apparmor.security.beta.kubernetes.io/') || " +
				"variables.podAnnotations[k] in ['', 'runtime/default'] || variables.podAnnotations[k].startsWith('localhost/'))",
			Message: refused("run pods with a container.apparmor.security.beta.kubernetes.io annotation other than runtime/default or localhost/*"),
		},
		{
			Expression: "!" + celSet("variables.pod", "securityContext", "sysctls") + " || variables.pod.securityContext.sysctls.all(s, s.name in " + celList(baselineSysctls) + ")",
			Message:    refused("run pods with sysctls outside Pod Security baseline's safe set (" + strings.Join(baselineSysctls, ", ") + ")"),
		},
		{
			Expression: containersAll("!" + celSet("c", "securityContext", "procMount") + " || c.securityContext.procMount == 'Default'"),
			Message:    refused("run pods with procMount other than Default"),
		},
		{
			Expression: podAndContainers(func(v string) string { return "!" + v }, "windowsOptions", "hostProcess"),
			Message:    refused("run pods with windowsOptions.hostProcess"),
		},
		{
			Expression: containersAll(noHostHandlers()),
			Message:    refused("run pods with probes or lifecycle handlers aimed at another host (httpGet.host, tcpSocket.host)"),
		},
	}
}

// noHostHandlers is the CEL test that no probe nor lifecycle handler of
// container c names a host: the kubelet would reach it from the node (a
// baseline control since Kubernetes 1.34).
func noHostHandlers() string {
	var tests []string
	for _, handler := range [][]string{{"livenessProbe"}, {"readinessProbe"}, {"startupProbe"}, {"lifecycle", "postStart"}, {"lifecycle", "preStop"}} {
		for _, action := range []string{"httpGet", "tcpSocket"} {
			path := append(slices.Clone(handler), action, "host")
			tests = append(tests, fmt.Sprintf("!(%s && %s != '')", celSet("c", path...), celField("c", path...)))
		}
	}
	return strings.Join(tests, " && ")
}

// restrictedValidations are what Pod Security restricted adds to baseline.
func restrictedValidations(refused func(string) string) []admissionregistrationv1.Validation {
	restricted := func(what string) string { return refused("run pods " + what + " (Pod Security restricted)") }
	podNonRoot := celSet("variables.pod", "securityContext", "runAsNonRoot") + " && variables.pod.securityContext.runAsNonRoot"
	podSeccomp := celSet("variables.pod", "securityContext", "seccompProfile", "type") + " && variables.pod.securityContext.seccompProfile.type in " + celList(allowedProfiles)
	return []admissionregistrationv1.Validation{
		{
			// Set on the pod, a container may not say false; else each says true.
			Expression: podAndContainers(func(v string) string { return v }, "runAsNonRoot") + " && " +
				containersAll(celSet("c", "securityContext", "runAsNonRoot")+" || ("+podNonRoot+")"),
			Message: restricted("without runAsNonRoot: true on the pod or every container"),
		},
		{
			Expression: podAndContainers(func(v string) string { return v + " != 0" }, "runAsUser"),
			Message:    restricted("with runAsUser 0"),
		},
		{
			Expression: notWindows(containersAll(celSet("c", "securityContext", "allowPrivilegeEscalation") + " && !c.securityContext.allowPrivilegeEscalation")),
			Message:    restricted("without allowPrivilegeEscalation: false on every container"),
		},
		{
			Expression: notWindows(containersAll(celSet("c", "securityContext", "capabilities", "drop") + " && 'ALL' in c.securityContext.capabilities.drop")),
			Message:    restricted("without dropping ALL capabilities in every container"),
		},
		{
			Expression: notWindows(containersAll("!" + celSet("c", "securityContext", "capabilities", "add") + " || c.securityContext.capabilities.add.all(cap, cap == 'NET_BIND_SERVICE')")),
			Message:    restricted("adding capabilities other than NET_BIND_SERVICE"),
		},
		{
			Expression: notWindows(containersAll(celSet("c", "securityContext", "seccompProfile", "type") + " ? c.securityContext.seccompProfile.type in " + celList(allowedProfiles) + " : (" + podSeccomp + ")")),
			Message:    restricted("without seccompProfile type RuntimeDefault or Localhost on the pod or every container"),
		},
		{
			// Any source but the listed ones, newer ones too.
			Expression: "!has(variables.pod.volumes) || variables.pod.volumes.all(v, v.all(k, k in " + celList(append([]string{"name"}, restrictedVolumes...)) + "))",
			Message:    restricted("with volumes other than " + strings.Join(restrictedVolumes, ", ")),
		},
	}
}

// withPodSecurity holds the member's pods to level (validatePodSecurity),
// and records it on the policy.
func withPodSecurity(a *memberAccess, fed, level string) {
	if a.Policy.Annotations == nil {
		a.Policy.Annotations = map[string]string{}
	}
	a.Policy.Annotations[podSecurityAnnotation] = level
	if level != podSecurityRestricted {
		return
	}
	for _, v := range restrictedValidations(refusedBy(fed, a.Policy.Name)) {
		v.Reason = ptr.To(metav1.StatusReasonForbidden)
		a.Policy.Spec.Validations = append(a.Policy.Spec.Validations, v)
	}
}

// validatePodSecurity checks --pod-security.
func validatePodSecurity(level string) error {
	if level != podSecurityBaseline && level != podSecurityRestricted {
		return fmt.Errorf("--pod-security: %q is not a Pod Security level the member's policy enforces (%s or %s)", level, podSecurityBaseline, podSecurityRestricted)
	}
	return nil
}
