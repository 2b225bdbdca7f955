package serviceaccounttoken

import (
	"crypto"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/client-go/util/keyutil"
)

// Keys are the key that signs the federation's tokens and the public keys
// that verify them: the signing key's own, and those of the key files
// (keys being rotated out, or a key shared by other issuers the
// federation trusts).
type Keys struct {
	// Signing signs new tokens.
	Signing crypto.Signer
	// Verifying verify tokens; the signing key's public key is first.
	Verifying []any
}

// LoadKeys reads the private key in signingKeyFile (PEM: RSA or ECDSA, as
// kube-apiserver's --service-account-signing-key-file) and the public or
// private keys in keyFiles (--service-account-key-file).
func LoadKeys(signingKeyFile string, keyFiles []string) (*Keys, error) {
	key, err := keyutil.PrivateKeyFromFile(signingKeyFile)
	if err != nil {
		return nil, fmt.Errorf("--service-account-signing-key-file %s: %w", signingKeyFile, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("--service-account-signing-key-file %s: a %T cannot sign tokens; give an RSA or ECDSA private key", signingKeyFile, key)
	}
	keys := &Keys{Signing: signer, Verifying: []any{signer.Public()}}
	for _, f := range keyFiles {
		public, err := keyutil.PublicKeysFromFile(f)
		if err != nil {
			return nil, fmt.Errorf("--service-account-key-file %s: %w", f, err)
		}
		keys.Verifying = append(keys.Verifying, public...)
	}
	return keys, nil
}

// EnsureSigningKey writes a new ECDSA private key to path unless a file is
// there, so that an apiserver started without a key file keeps signing
// with one key across restarts (as it keeps its self-signed serving
// certificate). Two apiservers of one federation must not rely on it:
// each would make its own key and refuse the other's tokens.
func EnsureSigningKey(path string) (created bool, err error) {
	if _, err := os.Stat(path); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, err
	}
	pem, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return false, err
	}
	// WriteKey writes 0600.
	if err := keyutil.WriteKey(path, pem); err != nil {
		return false, fmt.Errorf("writing the service-account signing key %s: %w", path, err)
	}
	return true, nil
}
