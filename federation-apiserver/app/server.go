package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/embeddedetcd"
	"github.com/federation-v1/federation/pkg/version"
)

// NewCommand returns the federation-apiserver command, which runs until ctx
// is done.
func NewCommand(ctx context.Context) *cobra.Command {
	o := NewOptions()
	cmd := &cobra.Command{
		Use:   "federation-apiserver",
		Short: "Serve the Kubernetes Federation API",
		Long: "federation-apiserver serves the federated Kubernetes types and federation/v1beta1 Clusters " +
			"over HTTPS, stored in etcd (an embedded one in --data-dir unless --etcd-servers is given).",
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return Run(cmd.Context(), o)
		},
	}
	cmd.SetContext(ctx)
	o.AddFlags(cmd.Flags())
	version.AddFlag(cmd)
	return cmd
}

// Run starts the embedded etcd when needed, then serves until ctx is done.
func Run(ctx context.Context, o *Options) error {
	if o.EmbeddedEtcd() {
		etcdOptions := o.embeddedEtcdOptions()
		etcd, err := embeddedetcd.StartWithOptions(o.DataDir, etcdOptions)
		if err != nil {
			return err
		}
		defer etcd.Stop()
		// The apiserver itself uses the private socket.
		o.Etcd.StorageConfig.Transport.ServerList = []string{etcd.ClientURL()}
		klog.FromContext(ctx).Info("Started embedded etcd", "dataDir", o.DataDir, "url", etcd.ClientURL(), "clientPort", etcd.PortURL())
		if etcd.PortURL() != "" && etcdOptions.ClientTLS == nil {
			klog.FromContext(ctx).Info("Warning: the embedded etcd's client port is plain HTTP, open to anyone on this machine: give it --embedded-etcd-tls-cert-file, --embedded-etcd-tls-private-key-file and --embedded-etcd-client-ca-file", "url", etcd.PortURL())
		}

		// Stop serving when the embedded etcd fails.
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		go func() {
			select {
			case err := <-etcd.Err():
				cancel(fmt.Errorf("embedded etcd in %s failed: %w", o.DataDir, err))
			case <-ctx.Done():
			}
		}()
	}
	config, err := o.Config()
	if err != nil {
		return err
	}
	server, err := config.Complete().New()
	if err != nil {
		return err
	}
	if err := server.Run(ctx); err != nil {
		return fmt.Errorf("serving the federation API: %w", err)
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return nil
}

// embeddedEtcdOptions are where the embedded etcd serves clients besides
// the apiserver's socket, and how.
func (o *Options) embeddedEtcdOptions() embeddedetcd.Options {
	opts := embeddedetcd.Options{ClientPort: o.EmbeddedEtcdClientPort}
	if o.EmbeddedEtcdClientTLS != (embeddedetcd.ClientTLS{}) {
		t := o.EmbeddedEtcdClientTLS
		opts.ClientTLS = &t
	}
	return opts
}
