package karmadaenv

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/federation-v1/federation/pkg/poll"
)

// What `karmadactl join` writes (Karmada's pkg/util/credential.go).
const (
	clusterNamespace   = "karmada-cluster"
	systemLabel        = "karmada.io/system"
	impersonatorSAName = "karmada-impersonator"
)

// ClusterResource is Karmada's Cluster, served by its aggregated apiserver.
var ClusterResource = schema.GroupVersionResource{Group: "cluster.karmada.io", Version: "v1alpha1", Resource: "clusters"}

// Join joins a member cluster in push mode as `karmadactl join` does: in
// the member, a namespace with a service account bound to full access and
// one for impersonation, each with a token secret; in Karmada, secrets with
// those tokens and the member's CA, and a Cluster pointing at the member.
// It returns once Karmada reports the cluster Ready.
func (p *Plane) Join(ctx context.Context, name string, member *rest.Config) error {
	mc, err := kubernetes.NewForConfig(member)
	if err != nil {
		return err
	}
	labels := map[string]string{systemLabel: "true"}
	if err := ensure(mc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterNamespace, Labels: labels}}, metav1.CreateOptions{})); err != nil {
		return fmt.Errorf("%s: namespace %s: %w", name, clusterNamespace, err)
	}
	impersonator, err := serviceAccountToken(ctx, mc, impersonatorSAName, labels)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	sa := "karmada-" + name
	role := "karmada-controller-manager:" + sa
	if err := ensure(mc.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: role, Labels: labels},
		Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
			{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}},
		},
	}, metav1.CreateOptions{})); err != nil {
		return fmt.Errorf("%s: cluster role: %w", name, err)
	}
	if err := ensure(mc.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role, Labels: labels},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: clusterNamespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
	}, metav1.CreateOptions{})); err != nil {
		return fmt.Errorf("%s: cluster role binding: %w", name, err)
	}
	creds, err := serviceAccountToken(ctx, mc, sa, labels)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	id, err := mc.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("%s: cluster id: %w", name, err)
	}

	kc, err := p.Client()
	if err != nil {
		return err
	}
	if err := ensure(kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterNamespace, Labels: labels}}, metav1.CreateOptions{})); err != nil {
		return fmt.Errorf("karmada namespace %s: %w", clusterNamespace, err)
	}
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: name + "-impersonator", Namespace: clusterNamespace, Labels: labels},
			Data: map[string][]byte{"token": impersonator.Data["token"]}},
		{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: clusterNamespace, Labels: labels},
			Data: map[string][]byte{"caBundle": creds.Data["ca.crt"], "token": creds.Data["token"]}},
	} {
		if err := ensure(kc.CoreV1().Secrets(clusterNamespace).Create(ctx, s, metav1.CreateOptions{})); err != nil {
			return fmt.Errorf("karmada secret %s: %w", s.Name, err)
		}
	}
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"syncMode":              "Push",
			"apiEndpoint":           member.Host,
			"id":                    string(id.UID),
			"secretRef":             map[string]any{"namespace": clusterNamespace, "name": name},
			"impersonatorSecretRef": map[string]any{"namespace": clusterNamespace, "name": name + "-impersonator"},
		},
	}}
	dyn, err := p.dynamic()
	if err != nil {
		return err
	}
	created, err := dyn.Resource(ClusterResource).Create(ctx, cluster, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating Cluster %s: %w", name, err)
	}
	// The secrets belong to the cluster, as karmadactl join leaves them.
	owner := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"cluster.karmada.io/v1alpha1","kind":"Cluster","name":%q,"uid":%q,"controller":true,"blockOwnerDeletion":true}]}}`,
		name, created.GetUID())
	for _, s := range []string{name, name + "-impersonator"} {
		if _, err := kc.CoreV1().Secrets(clusterNamespace).Patch(ctx, s, "application/merge-patch+json", []byte(owner), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("karmada secret %s: %w", s, err)
		}
	}
	return poll.Until(ctx, 2*time.Minute, "Karmada to report cluster "+name+" Ready", func(ctx context.Context) error {
		c, err := dyn.Resource(ClusterResource).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !conditionTrue(c, "Ready") {
			return errors.New("not Ready yet")
		}
		return nil
	})
}

// serviceAccountToken creates a service account in the member's
// karmada-cluster namespace and a token secret for it, and returns the
// secret once the member's token controller has filled it.
func serviceAccountToken(ctx context.Context, mc kubernetes.Interface, name string, labels map[string]string) (*corev1.Secret, error) {
	if err := ensure(mc.CoreV1().ServiceAccounts(clusterNamespace).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: clusterNamespace, Labels: labels}}, metav1.CreateOptions{})); err != nil {
		return nil, fmt.Errorf("service account %s: %w", name, err)
	}
	if err := ensure(mc.CoreV1().Secrets(clusterNamespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: clusterNamespace, Annotations: map[string]string{corev1.ServiceAccountNameKey: name}},
		Type:       corev1.SecretTypeServiceAccountToken,
	}, metav1.CreateOptions{})); err != nil {
		return nil, fmt.Errorf("token secret %s: %w", name, err)
	}
	var secret *corev1.Secret
	err := poll.Until(ctx, time.Minute, "the token of service account "+name, func(ctx context.Context) error {
		s, err := mc.CoreV1().Secrets(clusterNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(s.Data["token"]) == 0 {
			return errors.New("no token yet")
		}
		secret = s
		return nil
	})
	return secret, err
}

// ensure ignores AlreadyExists.
func ensure[T any](_ T, err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
