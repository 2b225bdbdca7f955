package dns_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
)

// changeRounds is how many times the benchmark takes cluster2's endpoints
// away and gives them back.
const changeRounds = 5

// A federated LoadBalancer Service whose pods are not federated: each member
// runs its own Deployment, which the benchmark scales in the member.
const webService = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: default
spec:
  type: LoadBalancer
  selector: {app: web}
  ports: [{port: 80}]
`

const webDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
`

// BenchmarkEndpointChangeToAnswer measures, with default intervals, how
// long a member endpoint change takes to show in the federation's DNS
// answers: cluster2's only pod goes away (scaled to 0 in the member), and
// comes back. For each change it times, from the scale request:
//   - the member itself: until its EndpointSlice shows the change (seen by
//     a watch on the member), the reference no federation can beat;
//   - the answer: until federation-dns answers the zone name of cluster2
//     with the CNAME fallback (or again with its address).
//
// The federation's own share is the difference. Target: answer under 5 s.
// Run it once, with -benchtime 1x.
func BenchmarkEndpointChangeToAnswer(b *testing.B) {
	ctx := context.Background()
	u, env, server := federationWithDNS(b)
	k := u.Kubectl()
	for _, c := range []string{"cluster1", "cluster2", "cluster3"} {
		if _, err := k.RunWithInput(ctx, webDeployment, "--context="+c, "apply", "-f", "-"); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := k.RunWithInput(ctx, webService, "--context=federation", "apply", "-f", "-"); err != nil {
		b.Fatal(err)
	}
	const (
		usEast = "web.default.federation.svc.us-east1.example.com."
		zoneC  = "web.default.federation.svc.us-east1-c.us-east1.example.com."
	)
	present := answer{ips: []string{"127.1.2.1"}}
	fallback := answer{cname: usEast, ips: []string{"127.1.1.1"}}
	if err := waitAnswer(ctx, server, zoneC, present, time.Minute); err != nil {
		b.Fatal(err)
	}
	member, err := env.Client("cluster2")
	if err != nil {
		b.Fatal(err)
	}
	records, prefix := recordsEtcd(b, u)
	// The zone name's etcd folder: /skydns/com/example/us-east1/us-east1-c/svc/federation/default/web.
	zoneDir := prefix + "/com/example/us-east1/us-east1-c/svc/federation/default/web/"

	var times [2][]changeTimes // [0]: endpoints gone, [1]: back
	for range changeRounds {
		for i, step := range []struct {
			replicas string
			ready    bool
			want     answer
		}{{"0", false, fallback}, {"1", true, present}} {
			c := change{k: k, member: member, records: records, recordsDir: zoneDir, server: server, name: zoneC}
			got, err := c.time(ctx, step.replicas, step.ready, step.want)
			if err != nil {
				b.Fatal(err)
			}
			times[i] = append(times[i], got)
		}
	}
	fmt.Printf("\nMember endpoint change to DNS answer: %d changes each way, times from the member's scale request.\n", changeRounds)
	fmt.Printf("member: its EndpointSlice changed; records: the federation wrote the zone name's records;\n")
	fmt.Printf("answer: federation-dns answered the new records (its cache holds answers up to %ds).\n", processplane.DNSCacheSeconds)
	fmt.Printf("%-16s %-7s %10s %10s %10s\n", "change", "figure", "member", "records", "answer")
	var answers []time.Duration
	for i, name := range []string{"endpoints gone", "endpoints back"} {
		pick := func(f func(changeTimes) time.Duration) []time.Duration {
			var out []time.Duration
			for _, t := range times[i] {
				out = append(out, f(t))
			}
			return out
		}
		member, recs, answer := pick(changeTimes.memberAt), pick(changeTimes.recordsAt), pick(changeTimes.answerAt)
		answers = append(answers, answer...)
		for _, f := range []struct {
			name string
			of   func([]time.Duration) time.Duration
		}{{"median", median}, {"max", slices.Max[[]time.Duration]}} {
			fmt.Printf("%-16s %-7s %10s %10s %10s\n", name, f.name, f.of(member).Round(time.Millisecond),
				f.of(recs).Round(time.Millisecond), f.of(answer).Round(time.Millisecond))
		}
	}
	b.ReportMetric(median(answers).Seconds(), "s-median-answer")
	b.ReportMetric(slices.Max(answers).Seconds(), "s-max-answer")
}

// changeTimes are the times, from the scale request, at which the member's
// EndpointSlice, the DNS records in etcd and the DNS answer changed.
type changeTimes struct{ member, records, answer time.Duration }

func (c changeTimes) memberAt() time.Duration  { return c.member }
func (c changeTimes) recordsAt() time.Duration { return c.records }
func (c changeTimes) answerAt() time.Duration  { return c.answer }

// change is one scale of cluster2's Deployment and what it is timed by.
type change struct {
	k interface {
		Run(context.Context, ...string) (string, error)
	}
	member     kubernetes.Interface
	records    *clientv3.Client
	recordsDir string
	server     string
	name       string
}

// time scales the member Deployment to replicas and times the member's
// EndpointSlice showing ready (or no ready) endpoints, the first write under
// the zone name's records folder, and federation-dns answering want.
func (c change) time(ctx context.Context, replicas string, ready bool, want answer) (changeTimes, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := c.member.DiscoveryV1().EndpointSlices("default").Watch(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=web"})
	if err != nil {
		return changeTimes{}, err
	}
	defer w.Stop()
	sliceSeen := make(chan time.Time, 1)
	go func() {
		for ev := range w.ResultChan() {
			if s, ok := ev.Object.(*discoveryv1.EndpointSlice); ok && ev.Type != watch.Error && hasReady(s) == ready {
				sliceSeen <- time.Now()
				return
			}
		}
	}()
	recordsSeen := make(chan time.Time, 1)
	etcdWatch := c.records.Watch(ctx, c.recordsDir, clientv3.WithPrefix())
	go func() {
		for resp := range etcdWatch {
			if len(resp.Events) > 0 {
				recordsSeen <- time.Now()
				return
			}
		}
	}()
	start := time.Now()
	if _, err := c.k.Run(ctx, "--context=cluster2", "scale", "deployment", "web", "--replicas="+replicas); err != nil {
		return changeTimes{}, err
	}
	if err := waitAnswer(ctx, c.server, c.name, want, time.Minute); err != nil {
		return changeTimes{}, err
	}
	out := changeTimes{answer: time.Since(start)}
	for _, seen := range []struct {
		ch   chan time.Time
		to   *time.Duration
		what string
	}{{sliceSeen, &out.member, "the member's EndpointSlice"}, {recordsSeen, &out.records, "the records in etcd"}} {
		select {
		case at := <-seen.ch:
			*seen.to = at.Sub(start)
		case <-time.After(30 * time.Second):
			return changeTimes{}, fmt.Errorf("%s never changed (ready=%v)", seen.what, ready)
		}
	}
	return out, nil
}

func hasReady(s *discoveryv1.EndpointSlice) bool {
	for _, e := range s.Endpoints {
		if e.Conditions.Ready == nil || *e.Conditions.Ready {
			return true
		}
	}
	return false
}

// waitAnswer polls name every 20 ms until it answers want.
func waitAnswer(ctx context.Context, server, name string, want answer, timeout time.Duration) error {
	return poll.UntilEvery(ctx, timeout, 20*time.Millisecond, fmt.Sprintf("%s to answer %s", name, want), func(ctx context.Context) error {
		got, err := query(ctx, server, name)
		if err != nil {
			return err
		}
		if got.rcode != want.rcode || got.cname != want.cname || !slices.Equal(got.ips, want.ips) {
			return fmt.Errorf("%s answered %s", name, got)
		}
		return nil
	})
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
