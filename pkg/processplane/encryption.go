package processplane

import (
	"errors"
	"io/fs"
	"os"

	"github.com/federation-v1/federation/pkg/pki"
)

// encryptionConfigFile is the apiserver's --encryption-provider-config,
// relative to the plane's folder: it holds the key, so it lives with the
// other secrets and only the owner may read it.
const encryptionConfigFile = "pki/encryption-config.yaml"

// writeEncryptionConfig writes an EncryptionConfiguration that seals
// Secrets with a new random 32-byte secretbox key. identity comes last so
// that values written before encryption was on stay readable. It is written
// once, at init, and never replaced: a new key would make every stored
// Secret unreadable.
func (p *Plane) writeEncryptionConfig() error {
	data, err := pki.NewEncryptionConfig()
	if err != nil {
		return err
	}
	return writeOnce(p.path(encryptionConfigFile), data, 0o600)
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
