package memberrbac

import (
	"testing"

	"github.com/stretchr/testify/assert"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIsAccessBinding(t *testing.T) {
	binding := func(fed, name string) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Name: name, Labels: map[string]string{AccessLabel: fed}}
	}
	rb := rbacv1.Resource("rolebindings")
	assert.True(t, IsAccessBinding(rb, binding("fed", AccessName("fed"))))
	assert.False(t, IsAccessBinding(rb, binding("fed", "other")), "another name")
	assert.False(t, IsAccessBinding(rb, binding("", AccessName("fed"))), "no label")
	assert.False(t, IsAccessBinding(rbacv1.Resource("roles"), binding("fed", AccessName("fed"))), "a Role")
}
