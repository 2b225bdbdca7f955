package kubefed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/pkg/poll"
)

// tokenTimeout bounds the wait for the member to fill the account's token.
const tokenTimeout = 30 * time.Second

// joinOptions are the options of `kubefed join`.
type joinOptions struct {
	clusterFlags
	dryRun bool
	// refresh brings the member objects of a joined cluster up to this
	// kubefed instead of joining it (joinrefresh.go).
	refresh bool
	// customResourceGroups are the API groups whose CRDs and custom
	// resources the federation may write in the member.
	customResourceGroups []string
	// addCustomResourceGroups (--refresh only) are groups granted on top
	// of those the member was joined with.
	addCustomResourceGroups []string
	// podSecurity is the Pod Security level the member's policy holds the
	// federation's pods to: baseline or restricted.
	podSecurity string
	// adoptNamespaces are the member namespaces join adopts for the
	// federation, which may then write in them.
	adoptNamespaces []string
	// connection is direct (the federation dials the member) or agent
	// (an agent in the member dials the federation); agent says where that
	// agent runs.
	connection, agent string
	// serverAddress is the address an agent member's Cluster records;
	// the federation never dials it.
	serverAddress string
	// agentChart are the flags of an agent run as a Deployment.
	agentChart agentChartOptions
}

func newJoinCommand(g *globalFlags) *cobra.Command {
	o := &joinOptions{clusterFlags: clusterFlags{globalFlags: g}}
	cmd := &cobra.Command{
		Use:   "join CLUSTER_NAME --context=FEDERATION [--cluster-context=CONTEXT]",
		Short: "Register a cluster with a federation",
		Long: `Register a cluster with a federation.

In the member (reached with --cluster-context, by default CLUSTER_NAME) it creates
the namespace federation-system, a ServiceAccount, a ClusterRole with only what the
federated types and health checks need, its binding and a long-lived token, and a
ValidatingAdmissionPolicy (with its binding) that refuses the account's writes to
kube-system, kube-public, kube-node-lease and federation-system, and to any namespace
the federation neither created nor was adopted in, and pods beyond Pod Security
baseline (or restricted, --pod-security). It marks the namespaces of
--adopt-namespaces adopted by the federation (unjoin takes the marks off).
A second ClusterRole, federation-FED-namespace-rbac, holds the account's RBAC
rights in the namespaces the federation creates; the policy bounds them to those
namespaces (see docs/guide/rbac-and-tenants.md, "Roles and RoleBindings"). In the federation it stores those credentials in a Secret in federation-system and
creates the Cluster object.

With --connection=agent the federation stores no credential: an agent that dials the
federation holds the member's. --agent=deployment (the default) installs it in the member's
federation-system from the chart deploy/charts/federation-agent (--agent-image,
--agent-values, --agent-federation-address); --agent=local runs it beside a local federation.

With --refresh, for a cluster joined already (by this or an earlier kubefed, either
connection): it brings the member's ClusterRoles, ClusterRoleBinding and admission
policy up to what this kubefed creates, in place, and prints what it changed; run
again, it changes nothing. It keeps the --custom-resource-groups and --pod-security
the member was joined with unless they are given, adopts namespaces only if
--adopt-namespaces is given, and leaves the account's token, the Cluster, its Secret,
the agent and every copy as they are.`,
		Example: `  kubefed join cluster1 --context=fed --cluster-context=cluster1
  kubefed join cluster1 --context=fed --cluster-context=cluster1 --refresh --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(args)
			if errs := validation.IsDNS1123Label(o.cluster); len(errs) > 0 {
				return fmt.Errorf("cluster name %q: %s", o.cluster, errs[0])
			}
			if o.refresh {
				return o.runRefresh(cmd.Context(), cmd.OutOrStdout(), cmd.LocalFlags())
			}
			if len(o.addCustomResourceGroups) > 0 {
				return errors.New("--add-custom-resource-groups is for --refresh of a joined cluster; a new join takes --custom-resource-groups")
			}
			if err := o.validateMemberSettings(); err != nil {
				return err
			}
			if err := validateConnection(o.connection, o.agent); err != nil {
				return err
			}
			if o.serverAddress != "" && o.connection != connectionAgent {
				return fmt.Errorf("--server-address is for --connection=%s: a member the federation dials is dialled at its cluster context's address", connectionAgent)
			}
			if err := o.agentChart.validate(cmd.Flags(), o.connection, o.agent); err != nil {
				return err
			}
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the objects that would be created (with --refresh: what would change), and create nothing")
	cmd.Flags().BoolVar(&o.refresh, "refresh", false,
		"for a joined cluster: bring the member's ClusterRoles, ClusterRoleBinding and admission policy up to this kubefed, in place, keeping the join's --custom-resource-groups and --pod-security unless given; idempotent")
	cmd.Flags().StringSliceVar(&o.customResourceGroups, "custom-resource-groups", nil,
		"API groups (example.com,cert-manager.io) whose CustomResourceDefinitions and custom resources the federation may create, change and delete in the member; none of Kubernetes' own (*.k8s.io)")
	cmd.Flags().StringSliceVar(&o.addCustomResourceGroups, "add-custom-resource-groups", nil,
		"with --refresh: API groups to grant on top of those the cluster was joined with (--custom-resource-groups replaces them)")
	cmd.Flags().StringVar(&o.podSecurity, "pod-security", podSecurityBaseline,
		"Pod Security level (baseline or restricted) the member's policy holds every pod and pod template the federation writes to, whatever the namespace's own Pod Security labels")
	cmd.Flags().StringSliceVar(&o.adoptNamespaces, "adopt-namespaces", []string{"default"},
		"existing member namespaces the federation may write in although it did not create them (labelled "+memberrbac.AdoptedByPrefix+"FEDERATION=true; missing ones are skipped; never kube-system, kube-public, kube-node-lease nor federation-system); --adopt-namespaces= adopts none")
	cmd.Flags().StringVar(&o.connection, "connection", connectionDirect,
		"how the federation reaches the member: direct (it dials the member's API server with a token stored in the federation) or agent (an agent in the member dials the federation, and the member's credential stays in the member)")
	cmd.Flags().StringVar(&o.agent, "agent", agentInMember,
		"with --connection=agent, where the agent runs: deployment (in the member's federation-system namespace) or local (a process beside a local federation, kept with it by kubefed start/stop)")
	cmd.Flags().StringVar(&o.serverAddress, "server-address", "",
		"with --connection=agent, the member's API address the Cluster shows (default: the cluster context's); the federation never dials it")
	o.agentChart.addFlags(cmd.Flags())
	return cmd
}

// validateMemberSettings checks the flags that shape the member's objects,
// which join and join --refresh share.
func (o *joinOptions) validateMemberSettings() error {
	if err := validateCustomResourceGroups(o.customResourceGroups); err != nil {
		return err
	}
	if err := validateCustomResourceGroups(o.addCustomResourceGroups); err != nil {
		return fmt.Errorf("--add-custom-resource-groups: %w", err)
	}
	if err := validatePodSecurity(o.podSecurity); err != nil {
		return err
	}
	return validateAdoptNamespaces(o.adoptNamespaces)
}

func (o *joinOptions) run(ctx context.Context, out io.Writer) error {
	fed, err := o.globalFlags.federation(ctx, o.federation)
	if err != nil {
		return err
	}
	memberCfg, member, err := o.memberClient(ctx, o.clusterContext)
	if err != nil {
		return err
	}
	if _, err := fed.fed.FederationV1beta1().Clusters().Get(ctx, o.cluster, metav1.GetOptions{}); err == nil {
		return fmt.Errorf("cluster %q is already joined to federation %q; nothing changed (--refresh brings its member objects up to this kubefed; unjoin it first to join it again)", o.cluster, o.federation)
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("checking for cluster %q in federation %q: %w", o.cluster, o.federation, err)
	}

	access := desiredMemberAccess(o.federation, o.customResourceGroups, o.podSecurity)
	cluster := &federationv1beta1.Cluster{
		TypeMeta:   typeMeta("federation/v1beta1", "Cluster"),
		ObjectMeta: metav1.ObjectMeta{Name: o.cluster},
		Spec: federationv1beta1.ClusterSpec{
			ServerAddressByClientCIDRs: []federationv1beta1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: memberCfg.Host}},
		},
	}
	if o.connection == connectionAgent {
		cluster.Spec.Connection = federationv1beta1.ConnectionAgent
		if o.serverAddress != "" {
			cluster.Spec.ServerAddressByClientCIDRs[0].ServerAddress = o.serverAddress
		}
	}
	if o.dryRun {
		return printObjects(out, access.Namespace, access.Account, access.Role, access.NamespaceRBAC, access.Binding, access.TokenSecret, access.Policy, access.PolicyBinding, cluster)
	}
	if o.connection == connectionAgent {
		return o.joinThroughAgent(ctx, out, fed, member, memberCfg, access, cluster)
	}

	undo := &rollback{}
	token, ca, err := setUpMember(ctx, out, member, access, o.federation, o.adoptNamespaces, undo)
	if err == nil {
		err = registerCluster(ctx, fed, cluster, token, append(ca, memberCfg.CAData...), undo)
	}
	if err != nil {
		if rbErr := undo.run(); rbErr != nil {
			err = fmt.Errorf("%w; cleaning up what was created also failed: %v", err, rbErr)
		}
		return fmt.Errorf("joining cluster %q: %w", o.cluster, err)
	}
	o.forwardDNS(ctx, out, fed, member)
	fmt.Fprintf(out, "cluster %q created\n", o.cluster)
	return nil
}

// desiredMemberAccess is what this kubefed creates in a member of
// federation fed joined with --custom-resource-groups=groups and
// --pod-security=podSecurity.
func desiredMemberAccess(fed string, groups []string, podSecurity string) *memberAccess {
	a := newMemberAccess(fed)
	withCustomResourceGroups(a, fed, groups)
	withPodSecurity(a, fed, podSecurity)
	return a
}

// forwardDNS makes the member's cluster DNS forward the federation's zone
// to the federation's DNS server, if it has one; a failure is a warning.
func (o *joinOptions) forwardDNS(ctx context.Context, out io.Writer, fed *federationClients, member kubernetes.Interface) {
	if zone, server, ok, err := federationDNS(ctx, fed.kube); err != nil || !ok {
		if err != nil {
			fmt.Fprintf(out, "warning: %v\n", err)
		}
	} else if changed, err := addForwarding(ctx, member, o.federation, zone, server); err != nil {
		fmt.Fprintf(out, "warning: the member's cluster DNS does not forward %s to the federation: %v\n", zone, err)
	} else if changed {
		fmt.Fprintf(out, "the member's cluster DNS (%s/%s) now forwards %s to %s\n", memberDNSNamespace, memberDNSConfigMap, zone, server)
	}
}

// setUpMember creates the member-side objects and adopts the namespaces
// of adopt (before the Cluster exists, so that the federation's first
// writes there are let in; a missing one is a warning on out), and returns
// the account's token and the member's CA.
func setUpMember(ctx context.Context, out io.Writer, member kubernetes.Interface, access *memberAccess, federation string, adopt []string, undo *rollback) ([]byte, []byte, error) {
	token, ca, err := createMemberAccess(ctx, member, access, undo)
	if err != nil {
		return nil, nil, err
	}
	skipped, err := adoptNamespaces(ctx, member, federation, adopt, undo)
	for _, s := range skipped {
		fmt.Fprintf(out, "warning: %s\n", s)
	}
	return token, ca, err
}

// createMemberAccess creates the member-side objects and returns the
// account's token and the member's CA.
func createMemberAccess(ctx context.Context, member kubernetes.Interface, a *memberAccess, undo *rollback) ([]byte, []byte, error) {
	core, rbac := member.CoreV1(), member.RbacV1()
	if _, err := core.Namespaces().Create(ctx, a.Namespace, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, nil, fmt.Errorf("creating namespace %s in the member: %w", a.Namespace.Name, err)
	}
	// The policy is in place before the account has a token to use.
	if err := installPolicy(ctx, member, a, undo); err != nil {
		return nil, nil, err
	}
	ns := a.Account.Namespace
	steps := []struct {
		what   string
		create func() error
		remove func() error
	}{
		{"ServiceAccount", func() error {
			_, err := core.ServiceAccounts(ns).Create(ctx, a.Account, metav1.CreateOptions{})
			return err
		},
			func() error {
				return core.ServiceAccounts(ns).Delete(context.Background(), a.Account.Name, metav1.DeleteOptions{})
			}},
		{"ClusterRole", func() error { _, err := rbac.ClusterRoles().Create(ctx, a.Role, metav1.CreateOptions{}); return err },
			func() error {
				return rbac.ClusterRoles().Delete(context.Background(), a.Role.Name, metav1.DeleteOptions{})
			}},
		{"ClusterRole " + a.NamespaceRBAC.Name, func() error {
			_, err := rbac.ClusterRoles().Create(ctx, a.NamespaceRBAC, metav1.CreateOptions{})
			return err
		},
			func() error {
				return rbac.ClusterRoles().Delete(context.Background(), a.NamespaceRBAC.Name, metav1.DeleteOptions{})
			}},
		{"ClusterRoleBinding", func() error {
			_, err := rbac.ClusterRoleBindings().Create(ctx, a.Binding, metav1.CreateOptions{})
			return err
		},
			func() error {
				return rbac.ClusterRoleBindings().Delete(context.Background(), a.Binding.Name, metav1.DeleteOptions{})
			}},
		{"ClusterRole " + a.ProxyRole.Name, func() error {
			_, err := rbac.ClusterRoles().Create(ctx, a.ProxyRole, metav1.CreateOptions{})
			return err
		},
			func() error {
				return rbac.ClusterRoles().Delete(context.Background(), a.ProxyRole.Name, metav1.DeleteOptions{})
			}},
		{"ClusterRoleBinding " + a.ProxyBinding.Name, func() error {
			_, err := rbac.ClusterRoleBindings().Create(ctx, a.ProxyBinding, metav1.CreateOptions{})
			return err
		},
			func() error {
				return rbac.ClusterRoleBindings().Delete(context.Background(), a.ProxyBinding.Name, metav1.DeleteOptions{})
			}},
		{"token Secret", func() error {
			_, err := core.Secrets(ns).Create(ctx, a.TokenSecret, metav1.CreateOptions{})
			return err
		},
			func() error {
				return core.Secrets(ns).Delete(context.Background(), a.TokenSecret.Name, metav1.DeleteOptions{})
			}},
	}
	for _, s := range steps {
		if err := s.create(); err != nil {
			return nil, nil, fmt.Errorf("creating %s in the member: %w", s.what, err)
		}
		undo.add(s.remove)
	}
	var token, ca []byte
	err := poll.Until(ctx, tokenTimeout, "the member to issue the token of "+a.Account.Name, func(ctx context.Context) error {
		s, err := core.Secrets(ns).Get(ctx, a.TokenSecret.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if token, ca = s.Data[corev1.ServiceAccountTokenKey], s.Data[corev1.ServiceAccountRootCAKey]; len(token) == 0 {
			return errors.New("the token Secret has no token yet")
		}
		return nil
	})
	return token, ca, err
}

// registerCluster stores the credentials in the federation and creates the Cluster.
func registerCluster(ctx context.Context, fed *federationClients, cluster *federationv1beta1.Cluster, token, ca []byte, undo *rollback) error {
	secrets := fed.kube.CoreV1().Secrets(federationv1beta1.SystemNamespace)
	secret, err := secrets.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{GenerateName: cluster.Name + "-", Namespace: federationv1beta1.SystemNamespace},
		Data:       map[string][]byte{membercluster.TokenKey: token, membercluster.CAKey: ca},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("storing the credentials in the federation: %w", err)
	}
	undo.add(func() error { return secrets.Delete(context.Background(), secret.Name, metav1.DeleteOptions{}) })
	cluster.Spec.SecretRef = &corev1.LocalObjectReference{Name: secret.Name}
	if _, err := fed.fed.FederationV1beta1().Clusters().Create(ctx, cluster, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the Cluster: %w", err)
	}
	return nil
}

// rollback undoes, newest first, what a failed command had created.
type rollback struct{ undo []func() error }

func (r *rollback) add(f func() error) { r.undo = append(r.undo, f) }

func (r *rollback) run() error {
	var errs []error
	for i := len(r.undo) - 1; i >= 0; i-- {
		if err := r.undo[i](); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// printObjects writes objects as a YAML stream.
func printObjects(out io.Writer, objects ...any) error {
	for _, obj := range objects {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "---\n%s", b)
	}
	return nil
}
