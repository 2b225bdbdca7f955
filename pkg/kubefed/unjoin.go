package kubefed

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/memberrbac"
)

// unjoinOptions are the options of `kubefed unjoin`.
type unjoinOptions struct {
	clusterFlags
}

func newUnjoinCommand(g *globalFlags) *cobra.Command {
	o := &unjoinOptions{clusterFlags: clusterFlags{globalFlags: g}}
	cmd := &cobra.Command{
		Use:   "unjoin CLUSTER_NAME --context=FEDERATION [--cluster-context=CONTEXT]",
		Short: "Remove a cluster from a federation",
		Long: `Remove a cluster from a federation: the Cluster and its credentials Secret in the
federation, and the ServiceAccount, ClusterRoles, bindings (also those in the
namespaces the federation created), token and admission policy in the member, and
the federation's adopted-by mark on the member's namespaces.
For a member reached through an agent, also the agent: its local process, or
what join installed in the member's federation-system.
Copies of federated objects stay in the member. When the member cannot be reached,
the federation side is still removed and kubefed says what it could not clean.`,
		Example: `  kubefed unjoin cluster3 --context=fed --cluster-context=cluster3`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(args)
			return o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.addFlags(cmd)
	return cmd
}

func (o *unjoinOptions) run(ctx context.Context, out, errOut io.Writer) error {
	fed, err := o.globalFlags.federation(ctx, o.federation)
	if err != nil {
		return err
	}
	clusters := fed.fed.FederationV1beta1().Clusters()
	cluster, err := clusters.Get(ctx, o.cluster, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("cluster %q is not joined to federation %q", o.cluster, o.federation)
	}
	if err != nil {
		return err
	}

	if err := o.removeMemberAccess(ctx); err != nil {
		name := accessName(o.federation)
		fmt.Fprintf(errOut, "warning: could not clean up cluster %q (remove them by hand: ServiceAccount and Secret %s/%s[-token], ClusterRole and ClusterRoleBinding %s and %s-proxy, ClusterRole %s and the RoleBindings labelled %s=%s, ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding %s, the label %s=%s of namespaces): %v\n",
			o.cluster, federationv1beta1.SystemNamespace, name, name, name, memberrbac.AccessName(o.federation), memberrbac.AccessLabel, o.federation, name,
			memberrbac.AdoptedByLabel(o.federation), memberrbac.Adopted, err)
	}
	if ref := cluster.Spec.SecretRef; ref != nil {
		err := fed.kube.CoreV1().Secrets(federationv1beta1.SystemNamespace).Delete(ctx, ref.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the credentials Secret %s/%s: %w", federationv1beta1.SystemNamespace, ref.Name, err)
		}
	}
	if err := clusters.Delete(ctx, o.cluster, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the Cluster %q: %w", o.cluster, err)
	}
	if federationv1beta1.IsAgent(cluster) {
		if err := o.removeAgent(ctx, out, fed); err != nil {
			fmt.Fprintf(errOut, "warning: %v\n", err)
		}
	}
	fmt.Fprintf(out, "Successfully removed cluster %q from federation\n", o.cluster)
	return nil
}

// removeMemberAccess deletes what join created in the member.
func (o *unjoinOptions) removeMemberAccess(ctx context.Context) error {
	_, member, err := o.memberClient(ctx, o.clusterContext)
	if err != nil {
		return err
	}
	a := newMemberAccess(o.federation)
	ns := a.Account.Namespace
	del := metav1.DeleteOptions{}
	var errs []error
	for _, remove := range []func() error{
		func() error { return member.RbacV1().ClusterRoleBindings().Delete(ctx, a.Binding.Name, del) },
		func() error { return member.RbacV1().ClusterRoles().Delete(ctx, a.Role.Name, del) },
		func() error { return member.RbacV1().ClusterRoleBindings().Delete(ctx, a.ProxyBinding.Name, del) },
		func() error { return member.RbacV1().ClusterRoles().Delete(ctx, a.ProxyRole.Name, del) },
		func() error { return removeNamespaceRBAC(ctx, member, o.federation) },
		func() error { return releaseNamespaces(ctx, member, o.federation) },
		func() error { return member.CoreV1().Secrets(ns).Delete(ctx, a.TokenSecret.Name, del) },
		func() error { return member.CoreV1().ServiceAccounts(ns).Delete(ctx, a.Account.Name, del) },
	} {
		if err := remove(); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	// The policy goes once the account it bounds is gone, not before.
	if len(errs) == 0 {
		errs = removePolicy(ctx, member, o.federation)
	}
	if _, err := removeForwarding(ctx, member, o.federation); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
