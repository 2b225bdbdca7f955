package apiserver

import (
	"context"
	"fmt"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/apis/certificates"
	csrstore "k8s.io/kubernetes/pkg/registry/certificates/certificates/storage"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// certificatesGroupVersion serves CertificateSigningRequests, through
// which federation agents get and renew their client certificates
// (package agentcredential; the controller manager's agentcerts
// controller approves and signs them). Nothing of it is propagated.
var certificatesGroupVersion = certificatesv1.SchemeGroupVersion

// Bounds of what one agent or bootstrap token may store as certificate
// requests: an agent's request is a few hundred bytes, and it needs one at
// a time (the controller manager deletes decided requests after an hour).
const (
	maxAgentRequestBytes = 16 << 10
	maxAgentRequests     = 10
)

// certificatesStores is Kubernetes' own storage of
// CertificateSigningRequests, with their status and approval
// subresources; agents' and bootstrap tokens' creates are bounded.
func certificatesStores(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	csrs, status, approval, err := csrstore.NewREST(getter)
	return map[string]rest.Storage{
		"certificatesigningrequests":          &boundedCSRs{REST: csrs},
		"certificatesigningrequests/status":   status,
		"certificatesigningrequests/approval": approval,
	}, err
}

// boundedCSRs refuses an agent's or bootstrap token's request that is too
// large, or beyond maxAgentRequests of its requester's still stored: else
// one hostile member could fill the federation's etcd.
type boundedCSRs struct {
	*csrstore.REST
}

func (b *boundedCSRs) Create(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	u, ok := genericapirequest.UserFrom(ctx)
	csr, isCSR := obj.(*certificates.CertificateSigningRequest)
	if !ok || !isCSR || !(slices.Contains(u.GetGroups(), federationv1beta1.AgentGroup) || slices.Contains(u.GetGroups(), federationv1beta1.AgentBootstrapGroup)) {
		return b.REST.Create(ctx, obj, validate, options)
	}
	if n := len(csr.Spec.Request); n > maxAgentRequestBytes {
		return nil, apierrors.NewInvalid(certificates.Kind("CertificateSigningRequest"), csr.Name, field.ErrorList{
			field.TooLong(field.NewPath("spec", "request"), "" /* not echoed */, maxAgentRequestBytes)})
	}
	list, err := b.REST.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return nil, err
	}
	stored := 0
	for _, item := range list.(*certificates.CertificateSigningRequestList).Items {
		if item.Spec.Username == u.GetName() {
			stored++
		}
	}
	if stored >= maxAgentRequests {
		return nil, apierrors.NewTooManyRequests(fmt.Sprintf("%s has %d certificate requests stored, the most an agent may: the federation deletes decided ones an hour after their decision", u.GetName(), stored), 0)
	}
	return b.REST.Create(ctx, obj, validate, options)
}
