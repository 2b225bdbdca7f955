package memberenv

import (
	"path/filepath"

	"github.com/federation-v1/federation/pkg/pki"
)

// keyMaterial holds the paths of the environment's shared keys.
type keyMaterial struct {
	// CACert and CAKey: the CA that signs every member's serving certificate.
	CACert string `json:"caCert"`
	CAKey  string `json:"caKey"`
	// ServiceAccountKey signs and verifies service-account tokens in every member.
	ServiceAccountKey string `json:"serviceAccountKey"`
}

// createKeyMaterial writes a new CA and service-account key into dir.
func createKeyMaterial(dir string) (keyMaterial, error) {
	k := keyMaterial{
		CACert:            filepath.Join(dir, "ca.crt"),
		CAKey:             filepath.Join(dir, "ca.key"),
		ServiceAccountKey: filepath.Join(dir, "service-account.key"),
	}
	ca, err := pki.NewCA("memberenv-ca")
	if err != nil {
		return k, err
	}
	if err := ca.WriteFiles(k.CACert, k.CAKey); err != nil {
		return k, err
	}
	return k, pki.WriteServiceAccountKey(k.ServiceAccountKey)
}

func (k keyMaterial) ca() (*pki.CA, error) { return pki.LoadCA(k.CACert, k.CAKey) }
