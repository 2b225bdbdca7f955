package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/test/memberenv"
	"github.com/federation-v1/federation/test/memberenv/lbsim"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "memberenv",
		Short:         "Run real Kubernetes member clusters (kube-apiserver, controller manager, scheduler, kwok nodes) on loopback",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	var dir string
	root.PersistentFlags().StringVar(&dir, "dir", "", "run folder of the environment (default <repo>/.run/members)")
	runDir := func() (string, error) {
		if dir != "" {
			return filepath.Abs(dir)
		}
		repo, err := memberenv.RepoRoot()
		if err != nil {
			return "", err
		}
		return filepath.Join(repo, ".run", "members"), nil
	}
	root.AddCommand(newUpCommand(runDir), newDownCommand(runDir), newStopCommand(runDir),
		newStartCommand(runDir), newBuildCommand(), newLBSimCommand())
	return root
}

func newUpCommand(runDir func() (string, error)) *cobra.Command {
	var clusters, nodes int
	var topology []string
	var merge bool
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start N member clusters and write their kubeconfig contexts cluster1..clusterN",
		Example: `  memberenv up --clusters=3
  memberenv up --clusters=2 --nodes=3 --topology=cluster2=europe-west1:europe-west1-b,europe-west1-c`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := runDir()
			if err != nil {
				return err
			}
			specs := memberenv.DefaultClusters(clusters, nodes)
			if err := memberenv.ApplyTopology(specs, topology); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			env, err := memberenv.Start(cmd.Context(), memberenv.Options{
				Dir: dir, Clusters: specs, Detached: true,
				Logf: func(f string, a ...any) { fmt.Fprintf(out, f+"\n", a...) },
			})
			if err != nil {
				return err
			}
			for _, m := range env.Members {
				fmt.Fprintf(out, "%s: %s (region %s, zones %v, %d nodes)\n", m.Spec.Name, m.Server, m.Spec.Region, m.Spec.Zones, m.Spec.Nodes)
			}
			fmt.Fprintf(out, "logs: %s\n", filepath.Join(dir, "logs"))
			if merge {
				if err := memberenv.MergeKubeconfig(env.Kubeconfig); err != nil {
					return fmt.Errorf("merging into your kubeconfig: %w", err)
				}
				fmt.Fprintln(out, "contexts merged into your kubeconfig")
			}
			fmt.Fprintf(out, "export KUBECONFIG=%s\n", env.Kubeconfig)
			return nil
		},
	}
	cmd.Flags().IntVar(&clusters, "clusters", 3, "number of member clusters")
	cmd.Flags().IntVar(&nodes, "nodes", 2, "kwok nodes per cluster")
	cmd.Flags().StringArrayVar(&topology, "topology", nil, "CLUSTER=REGION:ZONE[,ZONE...] placing a cluster's nodes (repeatable)")
	cmd.Flags().BoolVar(&merge, "merge-kubeconfig", false, "also copy the contexts into your own kubeconfig")
	return cmd
}

func newDownCommand(runDir func() (string, error)) *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Stop every process of the environment (logs stay in the run folder)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := runDir()
			if err != nil {
				return err
			}
			env, err := memberenv.Load(dir)
			if os.IsNotExist(err) {
				env = &memberenv.Environment{Dir: dir} // still sweep up strays
			} else if err != nil {
				return err
			}
			if err := env.Stop(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "stopped the environment in %s\n", dir)
			return nil
		},
	}
}

// memberCommand builds stop and start, which act on one member or on its apiserver alone.
func memberCommand(use, short string, runDir func() (string, error), act func(cmd *cobra.Command, env *memberenv.Environment, name string, apiserverOnly bool) error) *cobra.Command {
	var apiserverOnly bool
	cmd := &cobra.Command{
		Use:   use + " CLUSTER",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := runDir()
			if err != nil {
				return err
			}
			env, err := memberenv.Load(dir)
			if err != nil {
				return fmt.Errorf("no environment in %s (make up first): %w", dir, err)
			}
			if err := act(cmd, env, args[0], apiserverOnly); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s done\n", args[0], use)
			return nil
		},
	}
	cmd.Flags().BoolVar(&apiserverOnly, "apiserver-only", false, "act on the cluster's kube-apiserver alone")
	return cmd
}

func newStopCommand(runDir func() (string, error)) *cobra.Command {
	return memberCommand("stop", "Stop one member cluster (or only its kube-apiserver), keeping its data", runDir,
		func(_ *cobra.Command, env *memberenv.Environment, name string, apiserverOnly bool) error {
			if apiserverOnly {
				return env.StopAPIServer(name)
			}
			return env.StopMember(name)
		})
}

func newStartCommand(runDir func() (string, error)) *cobra.Command {
	return memberCommand("start", "Start a stopped member cluster (or only its kube-apiserver) again", runDir,
		func(cmd *cobra.Command, env *memberenv.Environment, name string, apiserverOnly bool) error {
			if apiserverOnly {
				return env.StartAPIServer(cmd.Context(), name)
			}
			return env.StartMember(cmd.Context(), name)
		})
}

func newBuildCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "build",
		Short: "Build and cache the environment's binaries (etcd, kube-*, kwok) if missing",
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := memberenv.RepoRoot()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			bins, err := memberenv.EnsureBinaries(cmd.Context(), root, func(f string, a ...any) { fmt.Fprintf(out, f+"\n", a...) })
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "binaries ready: %s\n", filepath.Dir(filepath.Dir(bins.KubeAPIServer)))
			return nil
		},
	}
}

func newLBSimCommand() *cobra.Command {
	var kubeconfig, pool, cluster, podPorts string
	cmd := &cobra.Command{
		Use:    "lbsim",
		Short:  "Run the load-balancer simulator of one member, and the server behind its pods' forwarded ports (started by up)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			prefix, err := netip.ParsePrefix(pool)
			if err != nil {
				return fmt.Errorf("--pool: %w", err)
			}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			served := make(chan error, 1)
			if podPorts != "" {
				// Listen first: a taken port ends the process at once,
				// and memberenv starts it again on another.
				l, err := net.Listen("tcp", podPorts)
				if err != nil {
					return err
				}
				go func() {
					served <- memberenv.ServePodPorts(ctx, l, cluster, cmd.ErrOrStderr())
					cancel()
				}()
			}
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			if err != nil {
				return err
			}
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			factory := informers.NewSharedInformerFactory(client, 0)
			c, err := lbsim.New(client, factory, prefix)
			if err != nil {
				return err
			}
			factory.Start(ctx.Done())
			err = c.Run(ctx)
			cancel()
			if podPorts != "" {
				err = errors.Join(err, <-served)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the member cluster")
	cmd.Flags().StringVar(&pool, "pool", "", "address pool, e.g. 127.1.3.0/24")
	cmd.Flags().StringVar(&cluster, "cluster", "", "name of the member cluster, the answer of its pods' forwarded ports")
	cmd.Flags().StringVar(&podPorts, "pod-ports-address", "", "HOST:PORT where kubectl port-forward to the member's pods leads (none when empty)")
	return cmd
}
