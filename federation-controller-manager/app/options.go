// Package app holds the federation-controller-manager command: its options,
// the registry of controllers, and the process that runs them.
package app

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/federation-v1/federation/pkg/clusterhealth"
	"github.com/federation-v1/federation/pkg/controllers/cluster"
)

// Options are the command-line options.
type Options struct {
	// Kubeconfig and Master locate the federation apiserver.
	Kubeconfig string
	Master     string
	// Controllers to run: "*" for all, "name" to add, "-name" to remove.
	Controllers []string
	// Address serves /healthz and /metrics over HTTP; empty disables it.
	Address string
	// Cluster tunes the cluster health controller.
	Cluster cluster.Options
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		Controllers: []string{"*"},
		Address:     "127.0.0.1:10266",
		Cluster: cluster.Options{
			Period:     10 * time.Second,
			Timeout:    5 * time.Second,
			Thresholds: clusterhealth.DefaultThresholds,
			Workers:    10,
		},
	}
}

// AddFlags adds the options' flags to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig of the federation apiserver (its current context is used)")
	fs.StringVar(&o.Master, "master", o.Master, "address of the federation apiserver; overrides the kubeconfig's")
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers, fmt.Sprintf(
		"controllers to run: '*' runs all, 'foo' adds foo, '-foo' removes foo. All: %v", sets.List(sets.KeySet(controllers))))
	fs.StringVar(&o.Address, "address", o.Address, "host:port serving /healthz and /metrics over HTTP; empty disables it")
	fs.DurationVar(&o.Cluster.Period, "cluster-monitor-period", o.Cluster.Period, "how often each member cluster's health is probed")
	fs.DurationVar(&o.Cluster.Timeout, "cluster-probe-timeout", o.Cluster.Timeout, "how long one health probe may take")
	fs.IntVar(&o.Cluster.Thresholds.Failure, "cluster-failure-threshold", o.Cluster.Thresholds.Failure, "consecutive failed probes before a Ready cluster is marked NotReady or Offline")
	fs.IntVar(&o.Cluster.Thresholds.Success, "cluster-success-threshold", o.Cluster.Thresholds.Success, "consecutive good probes before a cluster is marked Ready again")
	fs.IntVar(&o.Cluster.Workers, "concurrent-cluster-syncs", o.Cluster.Workers, "clusters probed in parallel")
}

// Validate returns every problem of the options at once.
func (o *Options) Validate() error {
	var errs []error
	if o.Kubeconfig == "" && o.Master == "" {
		errs = append(errs, errors.New("--kubeconfig or --master is required to reach the federation apiserver"))
	}
	for _, c := range o.Controllers {
		name := c
		if len(c) > 0 && c[0] == '-' {
			name = c[1:]
		}
		if _, ok := controllers[name]; !ok && name != "*" {
			errs = append(errs, fmt.Errorf("--controllers: unknown controller %q (known: %v)", name, sets.List(sets.KeySet(controllers))))
		}
	}
	if o.Address != "" {
		if _, _, err := net.SplitHostPort(o.Address); err != nil {
			errs = append(errs, fmt.Errorf("--address %q: %w", o.Address, err))
		}
	}
	if o.Cluster.Period <= 0 || o.Cluster.Timeout <= 0 {
		errs = append(errs, errors.New("--cluster-monitor-period and --cluster-probe-timeout must be positive"))
	}
	if o.Cluster.Thresholds.Failure < 1 || o.Cluster.Thresholds.Success < 1 {
		errs = append(errs, errors.New("--cluster-failure-threshold and --cluster-success-threshold must be at least 1"))
	}
	if o.Cluster.Workers < 1 {
		errs = append(errs, errors.New("--concurrent-cluster-syncs must be at least 1"))
	}
	return errors.Join(errs...)
}

// enabled reports whether the controller name runs under --controllers.
func (o *Options) enabled(name string) bool {
	on := false
	for _, c := range o.Controllers {
		switch c {
		case "*":
			on = true
		case name:
			return true
		case "-" + name:
			return false
		}
	}
	return on
}
