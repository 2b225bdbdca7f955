package security_test

import (
	"context"
	"fmt"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/pkg/poll"
)

// The federation's identity in the member: the ServiceAccount kubefed
// join creates, and the admission policy bound to it, both named after the
// federation.
const (
	federationAccountNamespace = "federation-system"
	federationAccount          = "federation-fed"
	memberPolicy               = "federation-fed"
)

// createdByFederation are the labels of a member namespace the federation
// created (the member's admin puts them here, as if it had).
var createdByFederation = map[string]string{memberrbac.CreatedByLabel: "fed"}

func init() {
	attacks["member: the federation's identity cannot write to kube-system"] = memberSystemNamespaces
	attacks["member: the federation's identity cannot run a privileged pod template"] = memberPrivilegedTemplates
	attacks["member: federated namespaces get Pod Security baseline"] = memberPodSecurity
}

// asFederation is a member client that acts as the federation does: the
// member's admin impersonating the federation's ServiceAccount.
func (f *fixture) asFederation() kubernetes.Interface {
	f.t.Helper()
	cfg, err := f.env.RESTConfig(member)
	require.NoError(f.t, err)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + federationAccountNamespace + ":" + federationAccount,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + federationAccountNamespace, "system:authenticated"},
	}
	c, err := kubernetes.NewForConfig(cfg)
	require.NoError(f.t, err)
	return c
}

// memberNamespace creates a namespace of the member's own, outside the
// federation, with labels, removed when the test ends.
func (f *fixture) memberNamespace(name string, labels map[string]string) {
	f.t.Helper()
	admin := f.memberClient()
	_, err := admin.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	require.NoError(f.t, err)
	f.t.Cleanup(func() {
		_ = admin.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// refusedByPolicy asserts that err is the member policy's refusal saying want.
func refusedByPolicy(t require.TestingT, err error, want string) {
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(err), "403: %v", err)
	assert.ErrorContains(t, err, fmt.Sprintf("ValidatingAdmissionPolicy '%s'", memberPolicy))
	assert.ErrorContains(t, err, want)
}

func memberSystemNamespaces(f *fixture) {
	ctx := context.Background()
	fed := f.asFederation()
	cm := func(ns string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "sec-member", Namespace: ns}, Data: map[string]string{"k": "v"}}
	}
	for _, ns := range []string{"kube-system", "kube-public", "kube-node-lease", "federation-system"} {
		_, err := fed.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns), metav1.CreateOptions{})
		refusedByPolicy(f.t, err, `federation "fed" may not write to namespace `+ns)
	}
	// Nor relabel the member's own namespaces.
	_, err := fed.CoreV1().Namespaces().Patch(ctx, "kube-system", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"baseline"}}}`), metav1.PatchOptions{})
	refusedByPolicy(f.t, err, `federation "fed" may not write to namespace kube-system`)

	// Positive control: the same identity writes in a namespace it created.
	f.memberNamespace("sec-member-writes", createdByFederation)
	_, err = fed.CoreV1().ConfigMaps("sec-member-writes").Create(ctx, cm("sec-member-writes"), metav1.CreateOptions{})
	require.NoError(f.t, err)

	// The federation has no rights on the policy that bounds it.
	err = fed.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, memberPolicy, metav1.DeleteOptions{})
	assert.True(f.t, apierrors.IsForbidden(err), "deleting the binding: %v", err)
	err = fed.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, memberPolicy, metav1.DeleteOptions{})
	assert.True(f.t, apierrors.IsForbidden(err), "deleting the policy: %v", err)
	_, err = f.memberClient().AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, memberPolicy, metav1.GetOptions{})
	require.NoError(f.t, err, "the binding is still there")
}

// deployment is a Deployment of one pause container; edit changes its pod spec.
func deployment(ns, name string, edit func(*corev1.PodSpec)) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
	if edit != nil {
		edit(&d.Spec.Template.Spec)
	}
	return d
}

func memberPrivilegedTemplates(f *fixture) {
	ctx := context.Background()
	const ns = "sec-member-pods"
	f.memberNamespace(ns, createdByFederation)
	deployments := f.asFederation().AppsV1().Deployments(ns)
	for _, tt := range []struct {
		name, refused string
		edit          func(*corev1.PodSpec)
	}{
		{"host-pid", "may not run pods with hostPID", func(s *corev1.PodSpec) { s.HostPID = true }},
		{"host-root", "may not run pods with hostPath volumes", func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
			s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "root", MountPath: "/host"}}
		}},
		{"privileged", "may not run privileged containers", func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		}},
	} {
		_, err := deployments.Create(ctx, deployment(ns, tt.name, tt.edit), metav1.CreateOptions{})
		refusedByPolicy(f.t, err, `federation "fed" `+tt.refused)
	}
	_, err := deployments.Create(ctx, deployment(ns, "plain", nil), metav1.CreateOptions{})
	require.NoError(f.t, err, "a plain Deployment is the federation's ordinary work")
	// Nor can it make the plain one privileged afterwards.
	// A patch, not a read and an update: the member's deployment
	// controller writes the status meanwhile, which would be a conflict.
	_, err = deployments.Patch(ctx, "plain", types.MergePatchType, []byte(`{"spec":{"template":{"spec":{"hostPID":true}}}}`), metav1.PatchOptions{})
	refusedByPolicy(f.t, err, "may not run pods with hostPID")
}

// podSecurityLabels reads the Pod Security labels of a member namespace.
func podSecurityLabels(ctx context.Context, member kubernetes.Interface, name string) (map[string]string, error) {
	ns, err := member.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, level := range []string{"enforce", "warn", "audit"} {
		if v, ok := ns.Labels["pod-security.kubernetes.io/"+level]; ok {
			out[level] = v
		}
	}
	return out, nil
}

func memberPodSecurity(f *fixture) {
	ctx := context.Background()
	member := f.memberClient()
	for _, ns := range []string{"sec-ns", "sec-ns-privileged"} {
		f.t.Cleanup(func() { _, _ = f.as("fed", "delete", "namespace", ns, "--wait=false", "--ignore-not-found") })
	}
	f.admin("create", "namespace", "sec-ns")
	_, err := f.applyAs("fed", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: sec-ns-privileged\n  labels: {pod-security.kubernetes.io/enforce: privileged}\n")
	require.NoError(f.t, err)

	want := map[string]map[string]string{
		"sec-ns":            {"enforce": "baseline", "warn": "baseline", "audit": "baseline"},
		"sec-ns-privileged": {"enforce": "privileged"},
	}
	for ns, labels := range want {
		require.NoError(f.t, poll.Until(ctx, converge, "the member's "+ns+" with Pod Security "+fmt.Sprint(labels), func(ctx context.Context) error {
			got, err := podSecurityLabels(ctx, member, ns)
			if err != nil {
				return err
			}
			if !assert.ObjectsAreEqual(labels, got) {
				return fmt.Errorf("Pod Security labels %v", got)
			}
			return nil
		}))
	}

	// The member enforces it, even on its own admin (a dry run leaves nothing).
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "host", Namespace: "sec-ns"},
		Spec:       corev1.PodSpec{HostPID: true, Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
	_, err = member.CoreV1().Pods("sec-ns").Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	require.Error(f.t, err)
	assert.ErrorContains(f.t, err, `violates PodSecurity "baseline:latest"`)
	pod.Namespace = "sec-ns-privileged"
	_, err = member.CoreV1().Pods("sec-ns-privileged").Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	assert.NoError(f.t, err, "the federated namespace chose privileged")
}
