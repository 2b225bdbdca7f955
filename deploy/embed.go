// Package deploy carries the federation's Helm charts into Go programs:
// kubefed renders them (helm's chart loader reads them from the embedded
// files) to install the control plane in a host cluster and an agent in a
// member cluster.
package deploy

import "embed"

// Chart holds the chart deploy/charts/federation, under that path.
//
//go:embed all:charts/federation
var Chart embed.FS

// AgentChart holds the chart deploy/charts/federation-agent, under that
// path: the agent of a member the federation cannot reach.
//
//go:embed all:charts/federation-agent
var AgentChart embed.FS
