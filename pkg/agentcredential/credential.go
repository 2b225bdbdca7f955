package agentcredential

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/klog/v2"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// Config says where the federation is and how the agent proves who it is.
type Config struct {
	// Server is the federation apiserver: https://HOST[:PORT].
	Server string
	// CAData is the federation's CA in PEM (FetchCA).
	CAData []byte
	// BootstrapToken (ID.SECRET, kubefed token create) gets the first
	// certificate; unused while Dir holds a valid one.
	BootstrapToken string
	// Cluster is the agent's Cluster at the federation.
	Cluster string
	// Dir keeps the private key and certificates (files of mode 0600),
	// unless Store is set.
	Dir string
	// Store, when set, keeps them instead of Dir (NewSecretStore: an
	// agent in a pod); the certificate manager's renewals are written
	// there too.
	Store certificate.Store
}

// where names the store, for messages.
func (cfg Config) where() string {
	if cfg.Store == nil {
		return cfg.Dir
	}
	if s, ok := cfg.Store.(fmt.Stringer); ok {
		return s.String()
	}
	return "the agent's certificate store"
}

// Errors Start returns (wrapped, with what to do).
var (
	// ErrTokenRefused: the federation does not know the bootstrap token.
	ErrTokenRefused = errors.New("the bootstrap token was refused: it is unknown, expired or already used")
	// ErrNotAccepted: the admin has not accepted the cluster yet.
	ErrNotAccepted = errors.New("waiting for the federation's admin to accept cluster")
	// ErrDenied: the federation denied the certificate request.
	ErrDenied = errors.New("the federation denied the agent's certificate request")
)

const (
	// defaultWait bounds Start when its context has no deadline.
	defaultWait = 2 * time.Minute
	// pendingNotice is how long a request may wait before Start says it
	// waits for the admin, and how often it says so again.
	pendingNotice = 3 * time.Second
	pendingRepeat = 30 * time.Second
	// storePrefix names the files in Dir: PREFIX-current.pem, the current
	// certificate and key.
	storePrefix = "federation-agent-client"
	userAgent   = "federation-agent"
)

// usages of the agent's certificate, as a kubelet's client certificate
// with an ECDSA key.
var usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}

// Credential is the agent's current client certificate, renewed in the
// background.
type Credential struct {
	manager certificate.Manager
	roots   *x509.CertPool
	cancel  context.CancelFunc
}

// Start returns the agent's credential: the certificate in Dir (or Store) if it is
// valid and the cluster's, else one got with the bootstrap token, blocking
// until the federation issues it (at most ctx's deadline, or 2 minutes).
// The certificate is renewed at 70-90% of its lifetime with a request the
// certificate itself authenticates, until Stop.
func Start(ctx context.Context, cfg Config) (*Credential, error) {
	if cfg.Server == "" || len(cfg.CAData) == 0 || cfg.Cluster == "" || (cfg.Dir == "" && cfg.Store == nil) {
		return nil, errors.New("agent credential: Server, CAData, Cluster and Dir or Store are required")
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(cfg.CAData) {
		return nil, errors.New("agent credential: CAData holds no PEM certificate")
	}
	store := cfg.Store
	if store == nil {
		if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("creating the agent's credentials folder: %w", err)
		}
		var err error
		store, err = certificate.NewFileStoreWithLogger(klog.FromContext(ctx).V(2), storePrefix, cfg.Dir, cfg.Dir, "", "")
		if err != nil {
			return nil, fmt.Errorf("the agent's certificate store in %s: %w", cfg.Dir, err)
		}
	}
	valid, err := validCertificate(store, cfg.Cluster, cfg.where())
	if err != nil {
		return nil, err
	}
	if !valid {
		if cfg.BootstrapToken == "" {
			return nil, fmt.Errorf("%s holds no valid certificate of cluster %q and no bootstrap token was given: ask the federation's admin for one (kubefed token create %s)",
				cfg.where(), cfg.Cluster, cfg.Cluster)
		}
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, defaultWait)
			defer cancel()
		}
		if err := bootstrap(ctx, cfg, roots, store); err != nil {
			return nil, err
		}
	}
	managerCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	manager, err := certificate.NewManager(&certificate.Config{
		ClientsetFn: func(current *tls.Certificate) (kubernetes.Interface, error) {
			if current == nil {
				return nil, fmt.Errorf("cluster %q's agent certificate expired: it needs a new bootstrap token (kubefed token create %s)", cfg.Cluster, cfg.Cluster)
			}
			return certificateClient(cfg.Server, roots, current)
		},
		Template:         template(cfg.Cluster),
		SignerName:       certificatesv1.KubeAPIServerClientSignerName,
		Usages:           usages,
		CertificateStore: store,
		Name:             userAgent,
		Ctx:              &managerCtx,
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("the agent's certificate manager: %w", err)
	}
	manager.Start()
	return &Credential{manager: manager, roots: roots, cancel: cancel}, nil
}

// TLSClientConfig verifies the federation with its CA and presents the
// current certificate on every new connection, so that renewed
// certificates apply to new connections.
func (c *Credential) TLSClientConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		RootCAs:    c.roots,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			if cert := c.manager.Current(); cert != nil {
				return cert, nil
			}
			return &tls.Certificate{}, nil
		},
	}
}

// Certificate is the current certificate.
func (c *Credential) Certificate() *x509.Certificate {
	if cert := c.manager.Current(); cert != nil {
		return cert.Leaf
	}
	return nil
}

// Stop ends the renewals.
func (c *Credential) Stop() {
	c.manager.Stop()
	c.cancel()
}

// template is the subject of the agent's certificate requests.
func template(cluster string) *x509.CertificateRequest {
	return &x509.CertificateRequest{Subject: pkix.Name{
		CommonName:   federationv1beta1.AgentUser(cluster),
		Organization: []string{federationv1beta1.AgentGroup},
	}}
}

// validCertificate: the store holds an unexpired certificate of cluster's
// agent.
func validCertificate(store certificate.Store, cluster, where string) (bool, error) {
	current, err := store.Current()
	var none *certificate.NoCertKeyError
	if errors.As(err, &none) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the agent's certificate from %s: %w", where, err)
	}
	leaf := current.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(current.Certificate[0]); err != nil {
			return false, fmt.Errorf("reading the agent's certificate: %w", err)
		}
	}
	if want := federationv1beta1.AgentUser(cluster); leaf.Subject.CommonName != want {
		return false, fmt.Errorf("%s holds the certificate of %q, not of %q: use another folder or Secret", where, leaf.Subject.CommonName, want)
	}
	return time.Now().Before(leaf.NotAfter), nil
}

// certificateClient authenticates with cert.
func certificateClient(server string, roots *x509.CertPool, cert *tls.Certificate) (kubernetes.Interface, error) {
	transport := utilnet.SetTransportDefaults(&http.Transport{TLSClientConfig: &tls.Config{
		MinVersion: tls.VersionTLS12, RootCAs: roots, Certificates: []tls.Certificate{*cert},
	}})
	return kubernetes.NewForConfig(&rest.Config{Host: server, Transport: transport, UserAgent: userAgent, Timeout: time.Minute})
}

// bootstrap gets the first certificate with the bootstrap token and puts
// it in store. It watches its request before creating it: once approved,
// the token is deleted, and the watch still delivers the certificate.
func bootstrap(ctx context.Context, cfg Config, roots *x509.CertPool, store certificate.Store) error {
	logger := klog.FromContext(ctx)
	client, err := kubernetes.NewForConfig(&rest.Config{
		Host: cfg.Server, BearerToken: cfg.BootstrapToken, UserAgent: userAgent,
		TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData},
	})
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	request, err := x509.CreateCertificateRequest(rand.Reader, template(cfg.Cluster), key)
	if err != nil {
		return fmt.Errorf("making the certificate request: %w", err)
	}
	requestPEM := pemBlock("CERTIFICATE REQUEST", request)
	name := requestName(cfg.Cluster)
	csrs := client.CertificatesV1().CertificateSigningRequests()
	w, err := csrs.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		return requestError(cfg, "watching the certificate request", err)
	}
	defer w.Stop()
	if _, _, err := csr.RequestCertificateWithContext(ctx, client, requestPEM, name, certificatesv1.KubeAPIServerClientSignerName, nil, usages, key); err != nil {
		return requestError(cfg, "requesting a certificate", err)
	}
	logger.Info("Requested the agent's certificate", "cluster", cfg.Cluster, "csr", name)
	certPEM, err := waitForCertificate(ctx, cfg, name, w)
	if err != nil {
		return err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	if _, err := store.Update(certPEM, keyPEM); err != nil {
		return fmt.Errorf("keeping the agent's certificate in %s: %w", cfg.where(), err)
	}
	logger.Info("Got the agent's certificate", "cluster", cfg.Cluster, "user", federationv1beta1.AgentUser(cfg.Cluster))
	return nil
}

// waitForCertificate waits on the watch of the request name until it is
// issued or denied, saying while it waits for the admin.
func waitForCertificate(ctx context.Context, cfg Config, name string, w watch.Interface) ([]byte, error) {
	logger := klog.FromContext(ctx)
	notice := time.NewTimer(pendingNotice)
	defer notice.Stop()
	waiting := fmt.Errorf("%w %s (kubefed accept %s): certificate request %s is pending", ErrNotAccepted, cfg.Cluster, cfg.Cluster, name)
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w; gave up: %w", waiting, context.Cause(ctx))
		case <-notice.C:
			logger.Info(fmt.Sprintf("Waiting for the federation's admin to accept cluster %s (kubefed accept %s)", cfg.Cluster, cfg.Cluster), "csr", name)
			notice.Reset(pendingRepeat)
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, fmt.Errorf("the watch of certificate request %s ended before it was issued; start again with a new bootstrap token if this one was used (kubefed token create %s)", name, cfg.Cluster)
			}
			if ev.Type == watch.Error {
				return nil, fmt.Errorf("watching certificate request %s: %w", name, apierrors.FromObject(ev.Object))
			}
			req, ok := ev.Object.(*certificatesv1.CertificateSigningRequest)
			if !ok {
				continue
			}
			if ev.Type == watch.Deleted {
				return nil, fmt.Errorf("certificate request %s was deleted before it was issued", name)
			}
			for _, c := range req.Status.Conditions {
				switch c.Type {
				case certificatesv1.CertificateDenied:
					return nil, fmt.Errorf("%w %s for cluster %q: %s (%s)", ErrDenied, name, cfg.Cluster, c.Message, c.Reason)
				case certificatesv1.CertificateFailed:
					return nil, fmt.Errorf("the federation failed to issue certificate request %s for cluster %q: %s (%s)", name, cfg.Cluster, c.Message, c.Reason)
				}
			}
			if len(req.Status.Certificate) > 0 {
				return req.Status.Certificate, nil
			}
		}
	}
}

// requestError explains a failed call with the bootstrap token.
func requestError(cfg Config, what string, err error) error {
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%w; ask the federation's admin for a new one (kubefed token create %s)", ErrTokenRefused, cfg.Cluster)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s for cluster %q: the bootstrap token may not (is it a federation agent's token, from kubefed token create?): %w", what, cfg.Cluster, err)
	}
	return fmt.Errorf("%s for cluster %q at %s: %w", what, cfg.Cluster, cfg.Server, err)
}

// requestName names a bootstrap request after its cluster.
func requestName(cluster string) string {
	suffix := utilrand.String(8)
	if len(cluster) > 200 {
		cluster = cluster[:200]
	}
	return "agent-" + cluster + "-" + suffix
}
