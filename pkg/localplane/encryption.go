package localplane

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	"sigs.k8s.io/yaml"
)

// encryptionConfigFile is the apiserver's --encryption-provider-config,
// relative to the plane's folder: it holds the key, so it lives with the
// other secrets and only the owner may read it.
const encryptionConfigFile = "pki/encryption-config.yaml"

// encryptionKeyName names the generated key in the stored values'
// prefix (k8s:enc:secretbox:v1:NAME:), so that a second key can be added
// later and the values still say which one sealed them.
const encryptionKeyName = "key1"

// encryptedResources are encrypted at rest: what a federation keeps
// secret, above all its members' credentials.
var encryptedResources = []string{"secrets"}

// writeEncryptionConfig writes an EncryptionConfiguration that seals
// Secrets with a new random 32-byte secretbox key. identity comes last so
// that values written before encryption was on stay readable. It is written
// once, at init, and never replaced: a new key would make every stored
// Secret unreadable.
func (p *Plane) writeEncryptionConfig() error {
	data, err := NewEncryptionConfig()
	if err != nil {
		return err
	}
	return writeOnce(p.path(encryptionConfigFile), data, 0o600)
}

// NewEncryptionConfig is an EncryptionConfiguration (YAML) sealing Secrets
// with a new random key, as a plane in a host cluster keeps it too.
func NewEncryptionConfig() ([]byte, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generating the encryption key: %w", err)
	}
	return yaml.Marshal(encryptionConfig(key))
}

func encryptionConfig(key []byte) *apiserverv1.EncryptionConfiguration {
	return &apiserverv1.EncryptionConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: apiserverv1.SchemeGroupVersion.String(), Kind: "EncryptionConfiguration"},
		Resources: []apiserverv1.ResourceConfiguration{{
			Resources: encryptedResources,
			Providers: []apiserverv1.ProviderConfiguration{
				{Secretbox: &apiserverv1.SecretboxConfiguration{Keys: []apiserverv1.Key{
					{Name: encryptionKeyName, Secret: base64.StdEncoding.EncodeToString(key)},
				}}},
				{Identity: &apiserverv1.IdentityConfiguration{}},
			},
		}},
	}
}

// writeOnce writes data to path unless the file exists: a key or policy
// already there (from an init that failed half-way, or edited by the
// person) is kept.
func writeOnce(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
