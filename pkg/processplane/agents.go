package processplane

import (
	"fmt"
	"os"
	"sort"
)

// AgentProgram is the agent of members the federation cannot dial, run
// beside a local plane by `kubefed join --connection=agent --agent=local`.
const AgentProgram = "federation-agent"

// AgentInstance names the local agent of cluster among the plane's
// processes.
func AgentInstance(cluster string) string { return AgentProgram + "-" + cluster }

// AgentDir is the folder of cluster's local agent: its member kubeconfig,
// key and certificates.
func (p *Plane) AgentDir(cluster string) string { return p.path("agents", cluster) }

// agentInstances are the plane's local agents, by cluster name; they start
// after the control plane and stop before it.
func agentInstances(p *Plane) []instance {
	names := make([]string, 0, len(p.Agents))
	for name := range p.Agents {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []instance
	for _, name := range names {
		out = append(out, instance{name: AgentInstance(name), program: AgentProgram, args: p.Agents[name]})
	}
	return out
}

// StartAgent records cluster's local agent with its arguments and starts
// it with the binary find gives; `kubefed stop` and `start` then stop and
// start it with the plane.
func (p *Plane) StartAgent(cluster string, args []string, find func(program string) (string, error)) error {
	path, err := find(AgentProgram)
	if err != nil {
		return err
	}
	if p.Agents == nil {
		p.Agents = map[string][]string{}
	}
	if proc := p.Processes[AgentInstance(cluster)]; proc.Alive() {
		return fmt.Errorf("federation %q already runs a local agent for cluster %q", p.Name, cluster)
	}
	p.Agents[cluster] = args
	in := instance{name: AgentInstance(cluster), program: AgentProgram, args: args}
	return p.startInstance(in, path)
}

// StopAgent stops cluster's local agent and forgets it, with its folder.
// A plane without that agent is left as it is.
func (p *Plane) StopAgent(cluster string) error {
	name := AgentInstance(cluster)
	if proc := p.Processes[name]; proc != nil {
		if err := proc.Stop(stopGrace); err != nil {
			return fmt.Errorf("stopping the local agent of cluster %q: %w", cluster, err)
		}
	}
	delete(p.Processes, name)
	delete(p.Agents, cluster)
	if err := os.RemoveAll(p.AgentDir(cluster)); err != nil {
		return err
	}
	return p.save()
}
