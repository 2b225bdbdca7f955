package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/embeddedetcd"
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
	return cmd
}

// Run starts the embedded etcd when needed, then serves until ctx is done.
func Run(ctx context.Context, o *Options) error {
	if o.EmbeddedEtcd() {
		etcd, err := embeddedetcd.Start(o.DataDir, o.EmbeddedEtcdClientPort)
		if err != nil {
			return err
		}
		defer etcd.Stop()
		o.Etcd.StorageConfig.Transport.ServerList = []string{etcd.ClientURL()}
		klog.FromContext(ctx).Info("Started embedded etcd", "dataDir", o.DataDir, "url", etcd.ClientURL())

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
