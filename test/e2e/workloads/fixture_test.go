package workloads_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	replicaSets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	jobs        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	hpas        = schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}
	three       = []string{"cluster1", "cluster2", "cluster3"}
)

// planAnnotation holds the current plan on a federated workload.
const planAnnotation = "federation.kubernetes.io/replica-plan"

// converge bounds how long planning and propagation may take here.
const converge = 60 * time.Second

// fixture is a federation "fed" joined to three member clusters.
type fixture struct {
	fedenv.Fixture
	env *memberenv.Environment
	// cmLog is the restarted controller manager's log.
	cmLog string
}

func (f *fixture) in(t *testing.T) *fixture {
	c := *f
	c.T = t
	return &c
}

// memberKubectl runs kubectl against a member and fails the test on error.
func (f *fixture) memberKubectl(cluster string, args ...string) string {
	f.T.Helper()
	out, err := f.User.Kubectl().Run(context.Background(), append([]string{"--context=" + cluster}, args...)...)
	require.NoError(f.T, err)
	return out
}

// counts reads a spec field of a workload in every cluster; -1 where it has no copy.
func (f *fixture) counts(ctx context.Context, gvr schema.GroupVersionResource, name, field string, clusters []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, c := range clusters {
		obj, err := f.Member(c).Resource(gvr).Namespace("e2e").Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			out[c] = -1
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s in %s: %w", name, c, err)
		}
		out[c], _, _ = unstructured.NestedInt64(obj.Object, "spec", field)
	}
	return out, nil
}

// waitCounts waits until check accepts the members' counts of a field.
func (f *fixture) waitCounts(timeout time.Duration, gvr schema.GroupVersionResource, name, field string, clusters []string, what string, check func(map[string]int64) bool) map[string]int64 {
	f.T.Helper()
	var last map[string]int64
	require.NoError(f.T, poll.Until(context.Background(), timeout, fmt.Sprintf("%s %s: %s", gvr.Resource, name, what), func(ctx context.Context) error {
		got, err := f.counts(ctx, gvr, name, field, clusters)
		if err != nil {
			return err
		}
		last = got
		if !check(got) {
			return fmt.Errorf("%s is %v", field, got)
		}
		return nil
	}))
	return last
}

// waitReplicas waits until each member's spec.replicas is as in want (a
// cluster with 0 may also have no copy).
func (f *fixture) waitReplicas(name string, want map[string]int64) {
	f.T.Helper()
	clusters := make([]string, 0, len(want))
	for c := range want {
		clusters = append(clusters, c)
	}
	f.waitCounts(converge, deployments, name, "replicas", clusters, fmt.Sprintf("replicas %v", want), func(got map[string]int64) bool {
		for c, n := range want {
			if got[c] != n && !(n == 0 && got[c] == -1) {
				return false
			}
		}
		return true
	})
}

// plan reads the plan annotation of a federated Deployment.
func (f *fixture) plan(name string) map[string]map[string]int64 {
	f.T.Helper()
	out := f.Kubectl("-n", "e2e", "get", "deployment", name, "-o", `jsonpath={.metadata.annotations.federation\.kubernetes\.io/replica-plan}`)
	var plan map[string]map[string]int64
	require.NoError(f.T, json.Unmarshal([]byte(out), &plan), "plan annotation %q", out)
	return plan
}

// waitFed waits until the federated object's jsonpath gives want.
func (f *fixture) waitFed(resource, name, jsonpath, want string) {
	f.T.Helper()
	require.NoError(f.T, poll.Until(context.Background(), converge, fmt.Sprintf("%s %s: %s = %q", resource, name, jsonpath, want), func(ctx context.Context) error {
		out, err := f.User.Kubectl().Run(ctx, "--context=fed", "-n", "e2e", "get", resource, name, "-o", "jsonpath="+jsonpath)
		if err != nil {
			return err
		}
		if strings.TrimSpace(out) != want {
			return fmt.Errorf("it is %q", out)
		}
		return nil
	}))
}

// rolloutStatus runs kubectl rollout status at the federation.
func (f *fixture) rolloutStatus(name string) string {
	f.T.Helper()
	k := f.User.Kubectl()
	k.Timeout = 3 * time.Minute
	out, err := k.Run(context.Background(), "--context=fed", "-n", "e2e", "rollout", "status", "deployment/"+name, "--timeout=150s")
	require.NoError(f.T, err, out)
	return out
}

// deployment is a Deployment manifest in namespace e2e.
func deployment(name string, replicas int, annotations string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
  namespace: e2e
  annotations: {%s}
spec:
  replicas: %d
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec:
      containers: [{name: app, image: nginx:1.25}]
`, name, annotations, replicas, name, name)
}

func prefs(annotation string) string {
	b, _ := json.Marshal(annotation)
	return `"federation.kubernetes.io/deployment-preferences": ` + string(b)
}

func sum(m map[string]int64, clusters ...string) int64 {
	var total int64
	for _, c := range clusters {
		total += max(m[c], 0)
	}
	return total
}

// newFixture is the fixture of federation "fed" with the members of env.
func newFixture(t *testing.T, u *fedenv.User, env *memberenv.Environment) *fixture {
	clients := env.Clients(func(cfg *rest.Config) { cfg.Timeout = 10 * time.Second })
	return &fixture{Fixture: fedenv.NewFixture(t, u, clients, "fed", converge), env: env}
}
