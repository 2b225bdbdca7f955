package pki

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	"sigs.k8s.io/yaml"
)

// EncryptionKeyName names the generated key in the stored values'
// prefix (k8s:enc:secretbox:v1:NAME:), so that a second key can be added
// later and the values still say which one sealed them.
const EncryptionKeyName = "key1"

// encryptedResources are encrypted at rest: what a federation keeps
// secret, above all its members' credentials.
var encryptedResources = []string{"secrets"}

// NewEncryptionConfig is an apiserver's EncryptionConfiguration (YAML)
// that seals Secrets with a new random 32-byte secretbox key. identity
// comes last so that values written before encryption was on stay
// readable. Write it once and never replace it: a new key would make every
// stored Secret unreadable.
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
					{Name: EncryptionKeyName, Secret: base64.StdEncoding.EncodeToString(key)},
				}}},
				{Identity: &apiserverv1.IdentityConfiguration{}},
			},
		}},
	}
}
