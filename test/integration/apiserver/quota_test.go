package apiserver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestResourceQuotaAdmission: the ResourceQuota admission plugin is on at
// the federation for the federated types' object counts. With the usage a
// quota controller would write (here written as the controller manager,
// which may), a create within the quota is charged to status.used and the
// one beyond it is refused with Kubernetes' 403.
func TestResourceQuotaAdmission(t *testing.T) {
	ctx := t.Context()
	cfg, err := clientcmd.BuildConfigFromFlags("", shared.tokenConfig)
	require.NoError(t, err)
	admin, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	cfg.Impersonate.UserName = controllerManager
	cm, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)

	const ns = "quota-admission"
	_, err = admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}) })

	hard := corev1.ResourceList{"count/configmaps": resource.MustParse("1"), "requests.cpu": resource.MustParse("1")}
	q, err := admin.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "objects"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard}}, metav1.CreateOptions{})
	require.NoError(t, err)
	configMap := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}
	}
	setUsed := func(q *corev1.ResourceQuota, used string) *corev1.ResourceQuota {
		q.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: corev1.ResourceList{"count/configmaps": resource.MustParse(used)}}
		q, err := cm.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, q, metav1.UpdateOptions{})
		require.NoError(t, err)
		return q
	}
	// Admission reads quotas from its informer, which sees a status write a
	// moment later; a create it checks against the quota as created (no
	// status.hard yet) is let through uncharged. So the quota is first full,
	// until a dry run (checked, never charged) is refused: from then on the
	// informer holds a status.hard. Then it is emptied, and the first create
	// is retried while the informer still reads it full (refused, uncharged).
	q = setUsed(q, "1")
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	require.Eventually(t, func() bool {
		_, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, configMap("first"), dryRun)
		return apierrors.IsForbidden(err)
	}, 30*time.Second, 50*time.Millisecond, "a full quota refuses a dry run once admission sees its status")
	setUsed(q, "0")
	var created error
	require.Eventually(t, func() bool {
		_, created = admin.CoreV1().ConfigMaps(ns).Create(ctx, configMap("first"), metav1.CreateOptions{})
		return !apierrors.IsForbidden(created)
	}, 30*time.Second, 50*time.Millisecond, "the emptied quota admits a create")
	require.NoError(t, created)
	q, err = admin.CoreV1().ResourceQuotas(ns).Get(ctx, "objects", metav1.GetOptions{})
	require.NoError(t, err)
	used := q.Status.Used["count/configmaps"]
	assert.Equal(t, "1", used.String(), "charged by admission")

	_, err = admin.CoreV1().ConfigMaps(ns).Create(ctx, configMap("second"), metav1.CreateOptions{})
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(err), "403: %v", err)
	assert.Contains(t, err.Error(), "exceeded quota: objects, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1")

	// Not counted at the federation: the members' (a Secret is not limited here).
	_, err = admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{})
	assert.NoError(t, err)
}
