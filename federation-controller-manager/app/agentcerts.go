package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/controllers/agentcerts"
)

// AgentCertsOptions configure the agent certificates controller: the
// agents CA, which the federation apiserver trusts for agents only
// (its --agent-client-ca-file), and how long certificates last.
type AgentCertsOptions struct {
	SigningCertFile string
	SigningKeyFile  string
	Duration        time.Duration
}

func (o *AgentCertsOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.SigningCertFile, "agent-signing-cert-file", o.SigningCertFile,
		"PEM certificate of the agents CA, which signs federation agents' client certificates (the federation apiserver's --agent-client-ca-file); it must not be the federation's main CA. Without it and --agent-signing-key-file the "+agentcerts.Name+" controller does not run")
	fs.StringVar(&o.SigningKeyFile, "agent-signing-key-file", o.SigningKeyFile, "PEM private key of --agent-signing-cert-file")
	fs.DurationVar(&o.Duration, "agent-certificate-duration", o.Duration,
		"how long an agent's client certificate is valid; agents renew theirs at 70-90% of it (at least 1m)")
}

func (o *AgentCertsOptions) validate() []error {
	var errs []error
	if (o.SigningCertFile == "") != (o.SigningKeyFile == "") {
		errs = append(errs, errors.New("--agent-signing-cert-file and --agent-signing-key-file go together"))
	}
	if o.Duration < time.Minute {
		errs = append(errs, fmt.Errorf("--agent-certificate-duration %s: at least 1m", o.Duration))
	}
	return errs
}

// startAgentCerts builds the agent certificates controller; without the
// agents CA it does not run.
func startAgentCerts(ctx context.Context, cc *ControllerContext) (func(context.Context) error, error) {
	o := cc.Options.AgentCerts
	if o.SigningCertFile == "" {
		klog.FromContext(ctx).Info("Controller not configured: no --agent-signing-cert-file", "controller", agentcerts.Name)
		return nil, nil
	}
	signer, err := agentcerts.NewSigner(o.SigningCertFile, o.SigningKeyFile, o.Duration)
	if err != nil {
		return nil, err
	}
	c, err := agentcerts.New(cc.KubeClient, cc.FedClient, cc.KubeInformers.Certificates().V1().CertificateSigningRequests(),
		cc.SystemInformers.Core().V1().Secrets(), signer)
	if err != nil {
		return nil, err
	}
	return c.Run, nil
}
