package kubefed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
)

// Connections of `kubefed join --connection`.
const (
	connectionDirect = "direct"
	connectionAgent  = "agent"
)

// Where `kubefed join --connection=agent` runs the agent (--agent).
const (
	agentInMember = "deployment"
	agentLocal    = "local"
)

// agentReadyTimeout bounds how long join waits for a new agent member to
// become Ready (its agent registered, its tunnel open, its probe answered).
const agentReadyTimeout = 2 * time.Minute

// agentJoinTokenTTL is the life of the bootstrap token join mints for the
// agent it installs: the agent uses it within seconds.
const agentJoinTokenTTL = 15 * time.Minute

func validateConnection(connection, agent string) error {
	switch connection {
	case connectionDirect:
		if agent != agentInMember {
			return fmt.Errorf("--agent is for --connection=%s", connectionAgent)
		}
	case connectionAgent:
		if agent != agentInMember && agent != agentLocal {
			return fmt.Errorf("--agent %q: want %s (a Deployment in the member) or %s (a local process beside a local federation)", agent, agentInMember, agentLocal)
		}
	default:
		return fmt.Errorf("--connection %q: want %s (the federation dials the member) or %s (an agent in the member dials the federation)", connection, connectionDirect, connectionAgent)
	}
	return nil
}

// joinThroughAgent registers a member that the federation reaches through
// an agent: the member gets the same account, role and policy as a member
// the federation dials, and the agent runs with that account; the
// federation gets the Cluster and a bootstrap token for the agent, and
// stores no credential of the member.
func (o *joinOptions) joinThroughAgent(ctx context.Context, out io.Writer, fed *federationClients, member kubernetes.Interface, memberCfg *rest.Config, access *memberAccess, cluster *federationv1beta1.Cluster) error {
	cluster.Spec.Connection = federationv1beta1.ConnectionAgent
	var plane *processplane.Plane
	if o.agent == agentLocal {
		var err error
		if plane, err = localPlane(o.federation); err != nil {
			return err
		}
	}
	fedCfg, err := o.restConfigFor(o.federation)
	if err != nil {
		return err
	}
	federationCA, err := caOf(fedCfg)
	if err != nil {
		return err
	}

	agent := agentSetup{cluster: o.cluster, federationName: o.federation, federation: fed.host, federationCA: federationCA, member: memberCfg}
	if plane == nil {
		if err := agent.checkMember(ctx, &o.agentChart, access.TokenSecret.Name); err != nil {
			return fmt.Errorf("joining cluster %q through an agent: %w", o.cluster, err)
		}
	}

	undo := &rollback{}
	token, memberCA, err := setUpMember(ctx, out, member, access, o.federation, o.adoptNamespaces, undo)
	if err == nil {
		agent.bootstrapToken, err = createAgentCluster(ctx, fed, cluster, undo)
	}
	if err == nil {
		agent.memberToken, agent.memberCA = token, append(memberCA, memberCfg.CAData...)
		if plane != nil {
			err = agent.startLocal(plane, undo)
		} else {
			err = agent.startInMember(ctx, out, &o.agentChart, access.TokenSecret.Name, undo)
		}
	}
	if err != nil {
		if rbErr := undo.run(); rbErr != nil {
			err = fmt.Errorf("%w; cleaning up what was created also failed: %v", err, rbErr)
		}
		return fmt.Errorf("joining cluster %q through an agent: %w", o.cluster, err)
	}
	err = poll.Until(ctx, agentReadyTimeout, "cluster "+o.cluster+" to be Ready through its agent", func(ctx context.Context) error {
		c, err := fed.fed.FederationV1beta1().Clusters().Get(ctx, o.cluster, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !federationv1beta1.IsClusterReady(c) {
			return errors.New(readyMessage(c))
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(out, "warning: cluster %q is joined, but not Ready yet: %v\n", o.cluster, err)
		if plane != nil {
			fmt.Fprintf(out, "the agent's log: %s\n", plane.Processes[processplane.AgentInstance(o.cluster)].Log)
		} else {
			fmt.Fprintf(out, "the agent's log: kubectl --context=%s -n %s logs deployment/%s\n", o.clusterContext, federationv1beta1.SystemNamespace, agentRelease)
		}
	}
	o.forwardDNS(ctx, out, fed, member)
	fmt.Fprintf(out, "cluster %q created, reached through its agent\n", o.cluster)
	return nil
}

// readyMessage is what the Ready condition says, for a wait that gave up.
func readyMessage(c *federationv1beta1.Cluster) string {
	for _, cond := range c.Status.Conditions {
		if cond.Type == federationv1beta1.ClusterReady {
			return fmt.Sprintf("Ready is %s (%s): %s", cond.Status, cond.Reason, cond.Message)
		}
	}
	return "not probed yet"
}

// createAgentCluster creates the Cluster and a bootstrap token that
// accepts it at once (the person joining is the federation's admin), and
// returns the token.
func createAgentCluster(ctx context.Context, fed *federationClients, cluster *federationv1beta1.Cluster, undo *rollback) (string, error) {
	clusters := fed.fed.FederationV1beta1().Clusters()
	if _, err := clusters.Create(ctx, cluster, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("creating the Cluster: %w", err)
	}
	undo.add(func() error { return clusters.Delete(context.Background(), cluster.Name, metav1.DeleteOptions{}) })
	o := &tokenOptions{cluster: cluster.Name, ttl: agentJoinTokenTTL, autoAccept: true, now: time.Now}
	token, secret, err := o.createToken(ctx, fed.kube)
	if err != nil {
		return "", err
	}
	secrets := fed.kube.CoreV1().Secrets(federationv1beta1.SystemNamespace)
	undo.add(func() error { return secrets.Delete(context.Background(), secret.Name, metav1.DeleteOptions{}) })
	return token, nil
}

// agentSetup is what an agent is started with.
type agentSetup struct {
	cluster string
	// federationName names the federation's objects in the member (its
	// join account federation-NAME); federation is its address.
	federationName string
	federation     string
	federationCA   []byte
	bootstrapToken string
	// member is the member's address; memberToken and memberCA the
	// join account's credential there, which only the agent holds.
	member      *rest.Config
	memberToken []byte
	memberCA    []byte
}

// startLocal runs the agent as a process of the local plane, its files in
// the plane's folder.
func (a agentSetup) startLocal(plane *processplane.Plane, undo *rollback) error {
	args, err := a.files(plane.AgentDir(a.cluster), undo)
	if err != nil {
		return err
	}
	if err := plane.StartAgent(a.cluster, args, processplane.FindBinary); err != nil {
		return err
	}
	undo.add(func() error { return plane.StopAgent(a.cluster) })
	return nil
}

// files writes what a local agent reads into dir (readable only by the
// owner: the member's credential is among them) and returns the agent's
// arguments.
func (a agentSetup) files(dir string, undo *rollback) ([]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	undo.add(func() error { return os.RemoveAll(dir) })
	memberKubeconfig := clientcmdapi.NewConfig()
	memberKubeconfig.Clusters["member"] = &clientcmdapi.Cluster{Server: a.member.Host, CertificateAuthorityData: a.memberCA, TLSServerName: a.member.ServerName}
	memberKubeconfig.AuthInfos["agent"] = &clientcmdapi.AuthInfo{Token: string(a.memberToken)}
	memberKubeconfig.Contexts["member"] = &clientcmdapi.Context{Cluster: "member", AuthInfo: "agent"}
	memberKubeconfig.CurrentContext = "member"
	files := map[string][]byte{"federation-ca.crt": a.federationCA, "token": []byte(a.bootstrapToken)}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	if err := clientcmd.WriteToFile(*memberKubeconfig, filepath.Join(dir, "member.kubeconfig")); err != nil {
		return nil, err
	}
	return []string{
		"--cluster=" + a.cluster,
		"--federation=" + a.federation,
		"--federation-ca-file=" + filepath.Join(dir, "federation-ca.crt"),
		"--token-file=" + filepath.Join(dir, "token"),
		"--cert-dir=" + filepath.Join(dir, "pki"),
		"--member-kubeconfig=" + filepath.Join(dir, "member.kubeconfig"),
	}, nil
}

// localPlane is the local control plane of the federation named name.
func localPlane(name string) (*processplane.Plane, error) {
	reg, err := processplane.DefaultRegistry()
	if err != nil {
		return nil, err
	}
	plane, err := processplane.Locate(reg, name, "")
	if err != nil {
		return nil, fmt.Errorf("--agent=%s runs the agent beside a local federation, and %q is not one on this machine: %w", agentLocal, name, err)
	}
	return plane, nil
}

// caOf returns the CA a kubeconfig trusts for the federation apiserver.
func caOf(cfg *rest.Config) ([]byte, error) {
	if len(cfg.CAData) > 0 {
		return cfg.CAData, nil
	}
	if cfg.CAFile != "" {
		data, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading the federation's CA: %w", err)
		}
		return data, nil
	}
	return nil, errors.New("the federation's kubeconfig context names no certificate-authority for the apiserver: the agent could not check whom it dials")
}

// removeAgent stops what ran the agent of an unjoined cluster: its local
// process, if this machine runs the federation and the agent, or what join
// installed in the member (--agent=deployment), when the member's context
// reaches it; and its unused bootstrap tokens. The Cluster is gone
// already, so the federation has closed its tunnel whatever runs.
func (o *unjoinOptions) removeAgent(ctx context.Context, out io.Writer, fed *federationClients) error {
	var errs []error
	if plane, err := localPlane(o.federation); err == nil && plane.Agents[o.cluster] != nil {
		errs = append(errs, plane.StopAgent(o.cluster))
	} else if cfg, _, err := o.memberClient(ctx, o.clusterContext); err != nil {
		errs = append(errs, fmt.Errorf("could not delete an agent of cluster %q that join installed in the member, if any: the federation refuses it now; delete the objects of the member's %s labelled %s: %w",
			o.cluster, federationv1beta1.SystemNamespace, agentSelector(o.federation, o.cluster), err))
	} else if deleted, err := removeFromMember(ctx, cfg, o.federation, o.cluster); err != nil {
		errs = append(errs, err)
	} else if len(deleted) > 0 {
		fmt.Fprintf(out, "deleted the agent from the member's %s: %s\n", federationv1beta1.SystemNamespace, strings.Join(deleted, ", "))
	}
	err := fed.kube.CoreV1().Secrets(federationv1beta1.SystemNamespace).DeleteCollection(ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: federationv1beta1.AgentClusterLabel + "=" + o.cluster})
	if err != nil {
		errs = append(errs, fmt.Errorf("deleting the bootstrap tokens of cluster %q: %w", o.cluster, err))
	}
	return errors.Join(errs...)
}
