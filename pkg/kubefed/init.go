package kubefed

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/hostplane"
	"github.com/federation-v1/federation/pkg/processplane"
)

// initOptions are the options of `kubefed init`.
type initOptions struct {
	*globalFlags
	name               string
	local              bool
	hostClusterContext string
	dataDir            string
	advertiseAddress   string
	port               int
	etcdServers        []string
	dnsProvider        string
	dnsZoneName        string
	dnsProviderConfig  string
	dnsPort            int
	dryRun             bool
	ha                 bool
	// host are the flags of a plane in a host cluster; plane is what they
	// say, once validated.
	host  hostInitOptions
	plane *hostplane.Options
	// flags tell which flags were given.
	flags *pflag.FlagSet
	// find locates the control plane's binaries.
	find func(program string) (string, error)
}

func newInitCommand(g *globalFlags, find func(string) (string, error)) *cobra.Command {
	o := &initOptions{globalFlags: g, find: find}
	cmd := &cobra.Command{
		Use:   "init FEDERATION_NAME (--host-cluster-context=CONTEXT | --local)",
		Short: "Create a federation control plane",
		Long: `Create a federation control plane named FEDERATION_NAME.

With --host-cluster-context the control plane runs in that cluster, as in
Federation v1: in --federation-system-namespace, from the chart built into
kubefed (deploy/charts/federation): federation-apiserver replicas on an
etcd StatefulSet (or --etcd-servers), two controller managers electing a
leader and, with --dns-provider=coredns, federation-dns. kubefed issues the
credentials itself (a Secret NAME-credentials; the admin's key stays in
your kubeconfig), exposes the apiserver with a LoadBalancer or NodePort
Service, and writes the kubeconfig context FEDERATION_NAME for its address.
Objects are applied server-side (field manager kubefed): running init again
changes nothing, or puts back what was changed by hand. --values adds chart
values; the flags' values win over the file's.

With --local the control plane runs on this machine, with no host cluster:
federation-apiserver on its embedded etcd (or --etcd-servers), started as
background processes whose credentials, data and logs live in the data folder
(~/.federation/FEDERATION_NAME, or --data-dir). The folder is recorded in
~/.federation/registry.json, so that start, stop, delete, backup and restore
find it by the name alone. A kubeconfig context FEDERATION_NAME is added; the
current context is left alone.

With --ha the control plane survives the loss of any one process: a 3-member
etcd cluster (etcd-0..2; none with --etcd-servers), two federation-apiservers
sharing one port (the kubeconfig's one address) and two controller managers,
one leading, the other standing by.`,
		Example: `  # A federation in the cluster of context "host", reached through a load balancer
  kubefed init fed --host-cluster-context=host --dns-provider=coredns --dns-zone-name=example.com.

  # Through the nodes' ports, and the objects printed instead of created
  kubefed init fed --host-cluster-context=host --api-server-service-type=NodePort \
      --api-server-advertise-address=10.0.0.5 --dry-run

  # A federation on this machine
  kubefed init fed --local
  kubectl --context=fed get clusters

  # The high-availability topology
  kubefed init fed --local --ha`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			if !o.local {
				return o.runHost(cmd.Context(), cmd.OutOrStdout())
			}
			return o.run(cmd, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	o.flags = f
	f.BoolVar(&o.local, "local", false, "run the control plane on this machine instead of in a host cluster")
	f.StringVar(&o.hostClusterContext, "host-cluster-context", "", "kubeconfig context of the host cluster to run the control plane in")
	f.StringVar(&o.dataDir, "data-dir", "", "folder of the local control plane (default ~/.federation/FEDERATION_NAME)")
	f.StringVar(&o.advertiseAddress, "api-server-advertise-address", "", "--local: address the apiserver binds and puts in its certificate (default 127.0.0.1); in a host cluster with NodePort: the nodes' address put in the kubeconfig and the certificate (default: a node's address)")
	f.IntVar(&o.port, "api-server-port", 0, "port of the apiserver (--local default: a free port; in a host cluster: the Service's port, default 443)")
	f.StringSliceVar(&o.etcdServers, "etcd-servers", nil, "external etcd endpoints instead of the embedded etcd")
	f.StringVar(&o.dnsProvider, "dns-provider", "", "DNS provider of the federation: coredns")
	f.StringVar(&o.dnsZoneName, "dns-zone-name", "", "DNS zone of the federation, e.g. example.com.")
	f.StringVar(&o.dnsProviderConfig, "dns-provider-config", "", "coredns-provider.conf of an existing etcd/CoreDNS to use instead of starting federation-dns")
	f.IntVar(&o.dnsPort, "dns-port", 0, "port of federation-dns on the bind address, UDP and TCP (default: a free port; 53 needs root)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print what would be done, and do nothing")
	f.BoolVar(&o.ha, "ha", false, "high availability: a 3-member etcd cluster (unless --etcd-servers), two apiservers sharing the one address, two controller managers electing a leader")
	o.host.addFlags(f)
	return cmd
}

func (o *initOptions) complete(args []string) error {
	o.name = args[0]
	if o.dataDir == "" {
		dir, err := processplane.DefaultDir(o.name)
		if err != nil {
			return err
		}
		o.dataDir = dir
	}
	// The plane's programs and the registry need it from anywhere.
	dir, err := filepath.Abs(o.dataDir)
	if err != nil {
		return fmt.Errorf("--data-dir %q: %w", o.dataDir, err)
	}
	o.dataDir = dir
	return nil
}

func (o *initOptions) validate() error {
	switch {
	case o.local && o.hostClusterContext != "":
		return errors.New("--local and --host-cluster-context exclude each other: the control plane runs on this machine or in a host cluster")
	case !o.local && o.hostClusterContext == "":
		if o.ha {
			return errors.New("--ha is a topology of local processes: add --local")
		}
		return errors.New("--host-cluster-context=CONTEXT is required: the host cluster to run the control plane in (or --local, on this machine)")
	case !o.local:
		var err error
		o.plane, err = o.validateHost()
		return err
	}
	var errs []error
	if err := o.hostFlagsWithLocal(); err != nil {
		errs = append(errs, err)
	}
	switch {
	case o.dnsProvider != "" && o.dnsProvider != "coredns":
		errs = append(errs, fmt.Errorf("--dns-provider %q: only coredns is supported", o.dnsProvider))
	case o.dnsProvider == "" && (o.dnsZoneName != "" || o.dnsProviderConfig != ""):
		errs = append(errs, errors.New("--dns-zone-name and --dns-provider-config need --dns-provider=coredns"))
	case o.dnsProvider != "" && o.dnsZoneName == "":
		errs = append(errs, errors.New("--dns-provider=coredns needs --dns-zone-name, e.g. example.com."))
	}
	if o.dnsProviderConfig != "" {
		if _, err := os.Stat(o.dnsProviderConfig); err != nil {
			errs = append(errs, fmt.Errorf("--dns-provider-config: %w", err))
		} else if abs, err := filepath.Abs(o.dnsProviderConfig); err == nil {
			o.dnsProviderConfig = abs // the controller manager runs from another folder
		}
	}
	return errors.Join(errs...)
}

func (o *initOptions) run(cmd *cobra.Command, out io.Writer) error {
	reg, err := processplane.DefaultRegistry()
	if err != nil {
		return err
	}
	if err := processplane.Claim(reg, o.name, o.dataDir); err != nil {
		return err
	}
	plane, err := processplane.New(processplane.Options{
		Name: o.name, Dir: o.dataDir, AdvertiseAddress: o.advertiseAddress,
		Port: o.port, EtcdServers: o.etcdServers,
		DNSZone: o.dnsZoneName, DNSPort: o.dnsPort, DNSProviderConfig: o.dnsProviderConfig,
		HA: o.ha,
	})
	if err != nil {
		return err
	}
	if o.dryRun {
		fmt.Fprintf(out, "Would create federation %q in %s, served at %s, running:\n", o.name, o.dataDir, plane.Server)
		for _, line := range plane.CommandLines(o.find) {
			fmt.Fprintf(out, "  %s\n", line)
		}
		fmt.Fprintf(out, "and add the kubeconfig context %q (the current context stays).\n", o.name)
		return nil
	}
	ctx := cmd.Context()
	if err := step(out, "Creating federation control plane objects (credentials, data folder "+o.dataDir+")", func() error {
		if err := plane.Create(); err != nil {
			return err
		}
		// Recorded as soon as the folder exists, so that start, stop and
		// delete find it by name, even should init fail from here on.
		return reg.Record(o.name, o.dataDir)
	}); err != nil {
		return err
	}
	const starting = "Starting federation control plane processes..."
	fmt.Fprint(out, starting)
	started := false
	err = plane.Up(ctx, o.find, processplane.UpProgress{
		Started: func() {
			started = true
			fmt.Fprint(out, " done\nWaiting for federation control plane to come up")
		},
		Tick: func() { fmt.Fprint(out, ".") },
		Retrying: func(error) {
			started = false
			fmt.Fprintf(out, " a port was taken; picking other ports\n%s", starting)
		},
	})
	if err != nil {
		fmt.Fprintln(out, " failed")
		if started {
			err = fmt.Errorf("%w\nlogs are in %s", err, plane.Dir+"/logs")
		}
		return err
	}
	fmt.Fprintln(out, " done")
	if err := step(out, "Creating a namespace "+federationv1beta1.SystemNamespace+" for federation system components", func() error {
		if err := plane.EnsureSystemNamespace(ctx); err != nil {
			return err
		}
		return plane.PublishDNS(ctx)
	}); err != nil {
		return err
	}
	if err := step(out, "Updating kubeconfig", func() error {
		cfg, err := plane.AdminKubeconfig()
		if err != nil {
			return err
		}
		return addContext(o.pathOptions(), o.name, cfg)
	}); err != nil {
		return err
	}
	if plane.DNS != nil {
		fmt.Fprintf(out, "Federation DNS server for %s is answering at: %s\n", plane.DNSZone, plane.DNS.Address)
	}
	fmt.Fprintf(out, "Federation API server is running at: %s\n", plane.Server)
	return nil
}

// step prints "what... done" (or "failed") around do, as v1's kubefed did.
func step(out io.Writer, what string, do func() error) error {
	fmt.Fprintf(out, "%s...", what)
	if err := do(); err != nil {
		fmt.Fprintln(out, " failed")
		return err
	}
	fmt.Fprintln(out, " done")
	return nil
}
