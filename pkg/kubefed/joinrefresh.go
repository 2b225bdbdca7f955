package kubefed

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// `kubefed join --refresh` brings the member-side objects of a joined
// cluster up to what this kubefed's join creates, so that an upgrade
// reaches members joined by an earlier version without unjoining them. The
// controller manager cannot do it: its member identity may not widen its
// own rights nor the policy that bounds it, so it is the member admin's
// act, with the member admin's credentials. A refresh changes the
// ClusterRoles (join's and the namespace RBAC one), the ClusterRoleBinding
// and the ValidatingAdmissionPolicy with its binding, each by a server-side
// apply made only when a dry run of it says the object would change: a
// second refresh writes nothing. The ServiceAccount, its token, the Cluster,
// its Secret, the agent and the copies are left as they are.

// refreshFlags are join's flags that --refresh takes; the others say how a
// member is joined (its connection, its agent), which a refresh keeps.
var refreshFlags = []string{"refresh", "dry-run", "custom-resource-groups", "add-custom-resource-groups", "pod-security", "adopt-namespaces", "context", "cluster-context", "host-cluster-context"}

// validateRefreshFlags refuses, naming it, a set flag that --refresh does
// not take.
func validateRefreshFlags(flags *pflag.FlagSet) error {
	var err error
	flags.VisitAll(func(f *pflag.Flag) {
		if err == nil && f.Changed && !slices.Contains(refreshFlags, f.Name) {
			err = fmt.Errorf("--%s is not for --refresh: a refresh keeps how the cluster was joined and changes only the member objects join made (unjoin and join it again to change that)", f.Name)
		}
	})
	return err
}

// runRefresh is `kubefed join --refresh`; flags are the command's own.
func (o *joinOptions) runRefresh(ctx context.Context, out io.Writer, flags *pflag.FlagSet) error {
	if err := validateRefreshFlags(flags); err != nil {
		return err
	}
	if err := o.validateMemberSettings(); err != nil {
		return err
	}
	fed, err := o.globalFlags.federation(ctx, o.federation)
	if err != nil {
		return err
	}
	cluster, err := fed.fed.FederationV1beta1().Clusters().Get(ctx, o.cluster, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("cluster %q is not joined to federation %q; join it without --refresh", o.cluster, o.federation)
	}
	if err != nil {
		return fmt.Errorf("reading cluster %q of federation %q: %w", o.cluster, o.federation, err)
	}
	memberCfg, member, err := o.memberClient(ctx, o.clusterContext)
	if err != nil {
		return err
	}
	if err := sameMember(cluster, memberCfg.Host); err != nil {
		return fmt.Errorf("cluster context %q: %w; nothing changed", o.clusterContext, err)
	}
	name := accessName(o.federation)
	_, err = member.CoreV1().ServiceAccounts(federationv1beta1.SystemNamespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("cluster context %q has no ServiceAccount %s/%s: it is not the member joined as cluster %q of federation %q, or that account was deleted (unjoin and join it again); nothing changed",
			o.clusterContext, federationv1beta1.SystemNamespace, name, o.cluster, o.federation)
	}
	if err != nil {
		return fmt.Errorf("reading ServiceAccount %s/%s in the member: %w", federationv1beta1.SystemNamespace, name, err)
	}

	settings, err := o.refreshSettings(ctx, member, flags)
	if err != nil {
		return err
	}
	if kept := settings.describeKept(); kept != "" {
		fmt.Fprintf(out, "keeping the member's %s\n", kept)
	}
	a := desiredMemberAccess(o.federation, settings.customResourceGroups, settings.podSecurity)
	changed, err := refreshMemberAccess(ctx, out, member, a, o.dryRun)
	if err == nil && flags.Changed("adopt-namespaces") {
		var adopted int
		adopted, err = o.refreshAdoptions(ctx, out, member)
		changed += adopted
	}
	if err != nil {
		return fmt.Errorf("refreshing cluster %q: %w (what was changed before stays; a refresh again finishes it)", o.cluster, err)
	}
	switch {
	case o.dryRun:
		fmt.Fprintf(out, "dry run: nothing changed in cluster %q\n", o.cluster)
	case changed == 0:
		fmt.Fprintf(out, "cluster %q is up to date: nothing changed\n", o.cluster)
	default:
		fmt.Fprintf(out, "cluster %q refreshed\n", o.cluster)
	}
	return nil
}

// refreshSettings are the settings of the refresh: those given, and for the
// others those the member was joined with.
func (o *joinOptions) refreshSettings(ctx context.Context, member kubernetes.Interface, flags *pflag.FlagSet) (joinSettings, error) {
	name := accessName(o.federation)
	role, err := member.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		role = nil
	} else if err != nil {
		return joinSettings{}, fmt.Errorf("reading ClusterRole %s in the member: %w", name, err)
	}
	policy, err := member.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		policy = nil
	} else if err != nil {
		return joinSettings{}, fmt.Errorf("reading ValidatingAdmissionPolicy %s in the member: %w", name, err)
	}
	s := recordedSettings(role, policy)
	if flags.Changed("custom-resource-groups") {
		s.customResourceGroups, s.groupsGiven = o.customResourceGroups, true
	} else if err := validateCustomResourceGroups(s.customResourceGroups); err != nil {
		return joinSettings{}, fmt.Errorf("the member's ClusterRole %s records groups join refuses (give --custom-resource-groups): %w", name, err)
	}
	if flags.Changed("add-custom-resource-groups") {
		s.customResourceGroups, s.groupsGiven = addGroups(s.customResourceGroups, o.addCustomResourceGroups), true
	}
	if flags.Changed("pod-security") {
		s.podSecurity, s.podSecurityGiven = o.podSecurity, true
	}
	return s, nil
}

// refreshAdoptions adopts the namespaces of --adopt-namespaces not adopted
// yet (a refresh never takes a mark off) and returns how many it adopted.
func (o *joinOptions) refreshAdoptions(ctx context.Context, out io.Writer, member kubernetes.Interface) (int, error) {
	pending, skipped, err := pendingAdoptions(ctx, member, o.federation, o.adoptNamespaces)
	for _, s := range skipped {
		fmt.Fprintf(out, "warning: %s\n", s)
	}
	if err != nil {
		return 0, err
	}
	for _, ns := range pending {
		if o.dryRun {
			fmt.Fprintf(out, "Namespace %s would be adopted\n", ns)
			continue
		}
		if err := markAdopted(ctx, member, ns, o.federation, true); err != nil {
			return 0, fmt.Errorf("adopting namespace %s: %w", ns, err)
		}
		fmt.Fprintf(out, "Namespace %s adopted\n", ns)
	}
	return len(pending), nil
}

// sameMember checks that a member context at host reaches the member of
// cluster: a member the federation dials must be at one of the addresses
// the Cluster records. A member reached through an agent may record any
// address (join --server-address), so the account check that follows is
// what tells it.
func sameMember(cluster *federationv1beta1.Cluster, host string) error {
	if federationv1beta1.IsAgent(cluster) {
		return nil
	}
	var recorded []string
	for _, a := range cluster.Spec.ServerAddressByClientCIDRs {
		if sameAddress(a.ServerAddress, host) {
			return nil
		}
		recorded = append(recorded, a.ServerAddress)
	}
	return fmt.Errorf("it is at %s, but cluster %q was joined at %s: it is another cluster (use a context of the member at that address)",
		host, cluster.Name, strings.Join(recorded, ", "))
}

// sameAddress reports whether two API server addresses are the same:
// scheme, host and port (443 by default), whatever the case or a trailing
// slash.
func sameAddress(a, b string) bool {
	norm := func(s string) string {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || u.Host == "" {
			return strings.ToLower(strings.TrimSuffix(s, "/"))
		}
		scheme, port := strings.ToLower(u.Scheme), u.Port()
		if scheme == "" {
			scheme = "https"
		}
		if port == "" {
			port = map[string]string{"https": "443", "http": "80"}[scheme]
		}
		return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port + strings.TrimSuffix(u.Path, "/")
	}
	return norm(a) == norm(b)
}

// addGroups is have with the groups of add it lacks, in order.
func addGroups(have, add []string) []string {
	out := slices.Clone(have)
	for _, g := range add {
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}
