// Package deploy carries the federation's Helm chart into Go programs:
// kubefed renders it (helm's chart loader reads Chart from the embedded
// files) to install the control plane in a host cluster.
package deploy

import "embed"

// Chart holds the chart deploy/charts/federation, under that path.
//
//go:embed all:charts/federation
var Chart embed.FS
