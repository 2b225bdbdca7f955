package serviceaccounttoken

import (
	"fmt"

	certutil "k8s.io/client-go/util/cert"
)

// RootCA picks, from the apiserver's serving certificate file, what a
// legacy token Secret gets as ca.crt, for clients to verify the federation
// apiserver with (kube-controller-manager's --root-ca-file): the CA
// certificates the file holds after the serving certificate (kubefed
// init, the Helm chart and the self-signed default all put the CA there).
// A file with no CA in it yields the whole chain: the best a client can
// be given, and what it would pin.
func RootCA(servingCertFile string) ([]byte, error) {
	certs, err := certutil.CertsFromFile(servingCertFile)
	if err != nil {
		return nil, fmt.Errorf("reading the serving certificate %s for token Secrets' ca.crt: %w", servingCertFile, err)
	}
	var cas []byte
	for _, c := range certs {
		if c.IsCA {
			pem, err := certutil.EncodeCertificates(c)
			if err != nil {
				return nil, err
			}
			cas = append(cas, pem...)
		}
	}
	if len(cas) > 0 {
		return cas, nil
	}
	return certutil.EncodeCertificates(certs...)
}
