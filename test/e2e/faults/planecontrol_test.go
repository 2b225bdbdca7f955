package faults_test

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/test/fedenv"
)

// planeControl takes instances of the HA plane away and brings them back
// (processplane's Kill, StopInstance, StartInstance), and finds the ones
// worth striking: the leading controller manager, the apiserver it talks
// to, the etcd leader.
type planeControl struct {
	u *fedenv.User
	// p is loaded once: its methods keep its state file up to date.
	p *processplane.Plane
}

func (pc *planeControl) plane() *processplane.Plane {
	if pc.p == nil {
		pc.p = pc.u.Plane(fedName)
	}
	return pc.p
}

// instances are the plane's instances of program; an HA plane runs at
// least two of each.
func (pc *planeControl) instances(t *testing.T, program string) []string {
	names := pc.plane().Instances(program)
	require.GreaterOrEqual(t, len(names), 2, "an HA plane runs several %s: %v", program, names)
	return names
}

func (pc *planeControl) kill(t *testing.T, instance string) {
	t.Logf("kill -9 %s", instance)
	require.NoError(t, pc.plane().Kill(instance))
}

func (pc *planeControl) stop(t *testing.T, instance string) {
	t.Logf("stopping %s", instance)
	require.NoError(t, pc.plane().StopInstance(instance))
}

// start starts the instance and waits until it serves.
func (pc *planeControl) start(t *testing.T, instance string) {
	t.Logf("starting %s", instance)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, pc.plane().StartInstance(ctx, instance))
}

// leadingControllerManager is the controller manager whose
// leader_election_master_status is 1; the others must say 0.
func (pc *planeControl) leadingControllerManager(t *testing.T) string {
	var leaders []string
	for _, instance := range pc.instances(t, processplane.ControllerManager) {
		base, err := pc.plane().ControllerManagerURL(instance)
		require.NoError(t, err)
		metrics, err := pc.plane().ControllerManagerMetrics(base)
		require.NoError(t, err, "reading the metrics of %s", instance)
		status, ok := leaderStatus(metrics)
		require.True(t, ok, "%s serves no leader_election_master_status for %s", instance, leaseName)
		if status == 1 {
			leaders = append(leaders, instance)
		}
	}
	require.Len(t, leaders, 1, "exactly one controller manager leads")
	return leaders[0]
}

// leaderStatus reads client-go's leader_election_master_status of our
// Lease from a /metrics body.
func leaderStatus(metrics string) (float64, bool) {
	lines := bufio.NewScanner(strings.NewReader(metrics))
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	for lines.Scan() {
		line := lines.Text()
		if strings.HasPrefix(line, "leader_election_master_status{") && strings.Contains(line, `name="`+leaseName+`"`) {
			fields := strings.Fields(line)
			v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
			return v, err == nil
		}
	}
	return 0, false
}

// apiserverOf is the apiserver instance that the controller manager
// instance has most connections to.
func (pc *planeControl) apiserverOf(t *testing.T, controllerManager string) string {
	p := pc.plane()
	server, err := url.Parse(p.Server)
	require.NoError(t, err)
	port, err := strconv.Atoi(server.Port())
	require.NoError(t, err)
	apiservers := map[string]int{}
	for _, name := range pc.instances(t, processplane.APIServer) {
		apiservers[name] = p.Processes[name].Pid
	}
	counts, err := serversOf(p.Processes[controllerManager].Pid, port, apiservers)
	require.NoError(t, err)
	best := ""
	for _, name := range sortedKeys(counts) {
		if best == "" || counts[name] > counts[best] {
			best = name
		}
	}
	require.NotEmpty(t, best, "%s has no connection to an apiserver on port %d", controllerManager, port)
	t.Logf("%s talks to %v", controllerManager, counts)
	return best
}

// etcdLeader is the etcd member that leads the plane's etcd cluster.
func (pc *planeControl) etcdLeader(t *testing.T) string {
	p := pc.plane()
	client, err := p.EtcdClient()
	require.NoError(t, err)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, m := range p.EtcdMembers {
		status, err := client.Status(ctx, m.ClientURL())
		require.NoError(t, err, "the status of etcd member %s", m.Name)
		if status.Header.MemberId == status.Leader {
			return m.Name
		}
	}
	require.FailNow(t, fmt.Sprintf("no etcd member of %v leads", p.EtcdMembers))
	return ""
}
