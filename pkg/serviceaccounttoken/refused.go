package serviceaccounttoken

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Unbindable is the rest.Getter TokenREST reads a token's bound Pod or
// Node with: the federation runs no pods and has no nodes, so a
// TokenRequest bound to one is refused (400) naming the field, where a
// cluster would look the object up.
func Unbindable(kind string) rest.Getter { return unbindable(kind) }

type unbindable string

func (k unbindable) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	return nil, apierrors.NewBadRequest(fmt.Sprintf(
		"spec.boundObjectRef: a token cannot be bound to %s %q: the federation has no %ss; bind it to a Secret, or to nothing",
		k, name, k))
}
