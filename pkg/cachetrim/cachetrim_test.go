package cachetrim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

func TestManagedFieldsAreDroppedAndTheRestKept(t *testing.T) {
	entry := metav1.ManagedFieldsEntry{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}
	typed := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"app": "a"},
			ManagedFields: []metav1.ManagedFieldsEntry{entry}},
		Data: map[string]string{"k": "v"},
	}
	out, err := ManagedFields(typed)
	require.NoError(t, err)
	cm := out.(*corev1.ConfigMap)
	assert.Nil(t, cm.ManagedFields)
	assert.Equal(t, "a", cm.Labels["app"])
	assert.Equal(t, "v", cm.Data["k"])

	u := &unstructured.Unstructured{}
	u.SetName("b")
	u.SetManagedFields([]metav1.ManagedFieldsEntry{entry})
	out, err = ManagedFields(u)
	require.NoError(t, err)
	assert.Nil(t, out.(*unstructured.Unstructured).GetManagedFields())
	assert.Equal(t, "b", out.(*unstructured.Unstructured).GetName())

	// What is not an object (a tombstone of one) passes as it is.
	tomb := cache.DeletedFinalStateUnknown{Key: "ns/a", Obj: typed}
	out, err = ManagedFields(tomb)
	require.NoError(t, err)
	assert.Equal(t, tomb, out)
}
