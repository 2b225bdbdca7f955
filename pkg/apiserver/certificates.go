package apiserver

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	csrstore "k8s.io/kubernetes/pkg/registry/certificates/certificates/storage"
)

// certificatesGroupVersion serves CertificateSigningRequests, through
// which federation agents get and renew their client certificates
// (package agentcredential; the controller manager's agentcerts
// controller approves and signs them). Nothing of it is propagated.
var certificatesGroupVersion = certificatesv1.SchemeGroupVersion

// certificatesStores is Kubernetes' own storage of
// CertificateSigningRequests, with their status and approval
// subresources.
func certificatesStores(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	csrs, status, approval, err := csrstore.NewREST(getter)
	return map[string]rest.Storage{
		"certificatesigningrequests":          csrs,
		"certificatesigningrequests/status":   status,
		"certificatesigningrequests/approval": approval,
	}, err
}
