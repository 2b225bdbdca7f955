package kubefed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/federation-v1/federation/pkg/agentcredential"
	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/pkg/processplane"
)

// registerOptions are the options of `kubefed register`, which the member's
// admin runs with the member's context only: no federation credential.
type registerOptions struct {
	*globalFlags
	cluster, clusterContext string
	// federationName names the federation's objects in the member (the
	// join account, its roles and policy), as join does.
	federationName string
	// federationAddress is the federation apiserver's https:// address.
	federationAddress string
	token, caCertHash string
	adoptNamespaces   []string
	podSecurity       string
	agent             string
	// agentChart are the flags of an agent run as a Deployment.
	agentChart agentChartOptions
	// dataDir keeps a local agent's files and process record.
	dataDir string
}

func newRegisterCommand(g *globalFlags) *cobra.Command {
	o := &registerOptions{globalFlags: g}
	cmd := &cobra.Command{
		Use:   "register CLUSTER_NAME --federation=https://ADDRESS --federation-name=NAME --token=TOKEN --ca-cert-hash=sha256:HASH --cluster-context=CONTEXT",
		Short: "Register this member cluster with a federation that cannot reach it, through an agent",
		Long: `Register member cluster CLUSTER_NAME with a federation that cannot dial it, with the
command 'kubefed token create' printed for the federation's admin. Run by the member's
admin, with the member's kubeconfig context only: no credential of the federation is
needed beyond the one-use bootstrap token.

It checks the federation's CA against --ca-cert-hash, then creates in the member what
'kubefed join' creates there (the federation-system namespace, the federation's
ServiceAccount, its least-privilege ClusterRoles and the ValidatingAdmissionPolicy
that bounds it) and starts the agent with that account: a Deployment in the member's
federation-system rendered from the agent chart (--agent=deployment, the default; as
kubefed join --connection=agent installs it), or a process on this machine
(--agent=local). The agent trades the token for its own client certificate at the
federation, and holds the tunnel through which the federation reaches the member. The
federation uses the cluster once its admin has accepted it (kubefed accept), unless the
token was created with --auto-accept.`,
		Example: `  kubefed register edge1 --federation=https://fed.example.com:6443 --federation-name=fed \
    --token=abcdef.0123456789abcdef --ca-cert-hash=sha256:... --cluster-context=edge1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cluster = args[0]
			if o.clusterContext == "" {
				o.clusterContext = o.cluster
			}
			if err := o.validate(); err != nil {
				return err
			}
			if err := o.agentChart.validate(cmd.Flags(), connectionAgent, o.agent); err != nil {
				return err
			}
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.clusterContext, "cluster-context", "", "kubeconfig context of the member cluster (default CLUSTER_NAME)")
	cmd.Flags().StringVar(&o.federationAddress, "federation", "", "https:// address of the federation apiserver")
	cmd.Flags().StringVar(&o.federationName, "federation-name", "", "the federation's name, as kubefed token create prints it")
	cmd.Flags().StringVar(&o.token, "token", "", "the bootstrap token of kubefed token create")
	cmd.Flags().StringVar(&o.caCertHash, "ca-cert-hash", "", "sha256:HASH of the federation CA's public key, as kubefed token create prints it")
	cmd.Flags().StringSliceVar(&o.adoptNamespaces, "adopt-namespaces", []string{"default"}, "as for kubefed join")
	cmd.Flags().StringVar(&o.podSecurity, "pod-security", podSecurityBaseline, "as for kubefed join")
	cmd.Flags().StringVar(&o.agent, "agent", agentInMember, "where the agent runs: deployment (in the member's federation-system, from the agent chart) or local (a process on this machine, its files in --data-dir)")
	cmd.Flags().StringVar(&o.dataDir, "data-dir", "", "with --agent=local, the agent's folder (default ~/.federation/agents/CLUSTER_NAME)")
	o.agentChart.addFlags(cmd.Flags())
	return cmd
}

func (o *registerOptions) validate() error {
	var errs []error
	if e := validation.IsDNS1123Label(o.cluster); len(e) > 0 {
		errs = append(errs, fmt.Errorf("cluster name %q: %s", o.cluster, e[0]))
	}
	if !strings.HasPrefix(o.federationAddress, "https://") {
		errs = append(errs, fmt.Errorf("--federation %q: want the federation apiserver's https:// address", o.federationAddress))
	}
	if e := validation.IsDNS1123Label(o.federationName); len(e) > 0 {
		errs = append(errs, fmt.Errorf("--federation-name %q: %s", o.federationName, e[0]))
	}
	if o.token == "" {
		errs = append(errs, errors.New("--token is required: ask the federation's admin for one (kubefed token create "+o.cluster+")"))
	}
	if !strings.HasPrefix(o.caCertHash, "sha256:") {
		errs = append(errs, errors.New("--ca-cert-hash is required, as sha256:HASH"))
	}
	if o.agent != agentLocal && o.agent != agentInMember {
		errs = append(errs, fmt.Errorf("--agent %q: want %s (a Deployment in the member) or %s (a process on this machine)", o.agent, agentInMember, agentLocal))
	}
	if o.agent != agentLocal && o.dataDir != "" {
		errs = append(errs, fmt.Errorf("--data-dir is for --agent=%s", agentLocal))
	}
	if err := validateAdoptNamespaces(o.adoptNamespaces); err != nil {
		errs = append(errs, err)
	}
	if err := validatePodSecurity(o.podSecurity); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (o *registerOptions) run(ctx context.Context, out io.Writer) error {
	federationCA, err := agentcredential.FetchCA(ctx, o.federationAddress, o.caCertHash)
	if err != nil {
		return err
	}
	if err := checkBootstrapToken(ctx, o.federationAddress, federationCA, o.token, o.cluster); err != nil {
		return err
	}
	memberCfg, member, err := o.memberClient(ctx, o.clusterContext)
	if err != nil {
		return err
	}
	access := newMemberAccess(o.federationName)
	withPodSecurity(access, o.federationName, o.podSecurity)
	setup := agentSetup{cluster: o.cluster, federationName: o.federationName, federation: o.federationAddress, federationCA: federationCA, bootstrapToken: o.token, member: memberCfg}
	dir, logs := o.dataDir, ""
	if o.agent == agentInMember {
		if err := setup.checkMember(ctx, &o.agentChart, access.TokenSecret.Name); err != nil {
			return fmt.Errorf("registering cluster %q: %w", o.cluster, err)
		}
		logs = fmt.Sprintf("kubectl --context=%s -n %s logs deployment/%s", o.clusterContext, federationv1beta1.SystemNamespace, agentRelease)
	} else {
		if dir == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return err
			}
			dir = filepath.Join(home, ".federation", "agents", o.cluster)
		}
		logs = filepath.Join(dir, "agent.log")
	}
	undo := &rollback{}
	token, memberCA, err := setUpMember(ctx, out, member, access, o.federationName, o.adoptNamespaces, undo)
	if err == nil {
		setup.memberToken, setup.memberCA = token, append(memberCA, memberCfg.CAData...)
		if o.agent == agentInMember {
			err = setup.startInMember(ctx, out, &o.agentChart, access.TokenSecret.Name, undo)
		} else {
			var args []string
			if args, err = setup.files(dir, undo); err == nil {
				err = startStandaloneAgent(dir, args)
			}
		}
	}
	if err != nil {
		if rbErr := undo.run(); rbErr != nil {
			err = fmt.Errorf("%w; cleaning up what was created also failed: %v", err, rbErr)
		}
		return fmt.Errorf("registering cluster %q: %w", o.cluster, err)
	}
	fmt.Fprintf(out, "the agent of cluster %q runs (its log: %s); the federation uses the cluster once its admin has accepted it (kubefed accept %s), unless the token was created with --auto-accept\n",
		o.cluster, logs, o.cluster)
	return nil
}

// startStandaloneAgent runs the agent as a process of its own, recorded in
// dir so that it can be found and stopped.
func startStandaloneAgent(dir string, args []string) error {
	path, err := processplane.FindBinary(processplane.AgentProgram)
	if err != nil {
		return err
	}
	proc := &localprocess.Process{Name: processplane.AgentProgram, Path: path, Args: args, Log: filepath.Join(dir, "agent.log")}
	return proc.Start(true)
}

// checkBootstrapToken asks the federation whether it knows token, before
// anything is created in the member: an unknown, expired or used token
// fails here with a clear message rather than later in the agent's log.
func checkBootstrapToken(ctx context.Context, server string, ca []byte, token, cluster string) error {
	client, err := kubernetes.NewForConfig(&rest.Config{Host: server, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}, Timeout: preflightTimeout})
	if err != nil {
		return err
	}
	_, err = client.Discovery().RESTClient().Get().AbsPath("/version").DoRaw(ctx)
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the federation refused the bootstrap token: it is unknown, expired or already used; ask the federation's admin for a new one (kubefed token create %s)", cluster)
	case err != nil:
		return fmt.Errorf("reaching the federation at %s: %w", server, err)
	}
	return nil
}
