package sync_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

var atRestHPAs = schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}

// quietWindow is how long the federation must write nothing more once its
// copies exist and the members have written their status.
const quietWindow = 20 * time.Second

// TestAtRestFromTheFirstWrite checks that a federation writes each copy
// once, with its create, and nothing after: the members' own status
// writes (a LoadBalancer's address from the load-balancer simulator, an
// HPA's conditions, workloads' status) are no drift to restore.
func TestAtRestFromTheFirstWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters")
	}
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(2, 1))
	two := []string{"cluster1", "cluster2"}
	u.InitFederation("fed")
	u.JoinAll("fed", two...)
	f := newFixture(t, u, env)

	// An HPA's copies take its target's replicas over in the members: the
	// target is written once more as they appear. That settles before the
	// count starts; the HPAs' own status writes come during it.
	f.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: rest}\n")
	for _, ty := range federatedTypes {
		if ty.resource == atRestHPAs {
			f.Apply(ty.manifest("rest", "obj-"+ty.name))
		}
	}
	f.WaitIn(two, atRestHPAs, "rest", "obj-horizontalpodautoscalers", labelled)
	require.NoError(t, poll.Until(context.Background(), converge, "the HPA's target marked at the federation", func(ctx context.Context) error {
		out, err := f.User.Kubectl().Run(ctx, "--context=fed", "get", "deployment", "obj-horizontalpodautoscalers", "-n", "rest", "-o",
			`jsonpath={.metadata.annotations.federation\.kubernetes\.io/hpa-target-cluster-list}`)
		if err != nil || out == "" {
			return fmt.Errorf("not marked: %q %v", out, err)
		}
		return nil
	}))
	f.atRest(5 * time.Second)
	before := f.memberWriteCounters()

	objects := 0
	for _, ty := range federatedTypes {
		if ty.resource != atRestHPAs {
			f.Apply(ty.manifest("rest", "obj-"+ty.name))
			objects++
		}
	}
	// As in the issue: a LoadBalancer Service exposing a Deployment.
	f.Kubectl("create", "deployment", "nginx", "-n", "rest", "--image=nginx", "--replicas=2")
	f.Kubectl("expose", "deployment", "nginx", "-n", "rest", "--port=80", "--type=LoadBalancer")
	objects += 2
	f.Apply("apiVersion: v1\nkind: Service\nmetadata: {name: lb, namespace: rest}\nspec:\n  type: LoadBalancer\n  selector: {app: lb}\n  ports: [{port: 443}]\n")
	objects++

	// The copies exist, and the members wrote the status that used to be
	// taken for drift.
	f.WaitIn(two, namespaces, "", "rest", labelled)
	for _, ty := range federatedTypes {
		f.WaitIn(two, ty.resource, "rest", "obj-"+ty.name, labelled)
	}
	f.WaitIn(two, atRestDeployments, "rest", "nginx", labelled)
	for _, name := range []string{"nginx", "lb"} {
		f.WaitIn(two, services, "rest", name, hasLoadBalancerAddress)
	}
	f.WaitIn(two, atRestHPAs, "rest", "obj-horizontalpodautoscalers", hasStatusConditions)

	// From then on: every member write is one of the copies' creates.
	want := objects * len(two)
	start := time.Now()
	err := poll.Until(context.Background(), quietWindow, "the end of the quiet window", func(context.Context) error {
		creates, others := writesSince(before, f.memberWriteCounters())
		if len(others) > 0 || creates > want {
			return poll.Abort(fmt.Errorf("member writes besides the %d creates, %s after the copies existed: %d creates, %v",
				want, time.Since(start).Round(time.Second), creates, others))
		}
		return fmt.Errorf("quiet for %s (%d of %d creates)", time.Since(start).Round(time.Second), creates, want)
	})
	require.ErrorContains(t, err, "timed out", "the window must end quietly")
	creates, _ := writesSince(before, f.memberWriteCounters())
	require.Equal(t, want, creates, "one create per copy")
	require.NotContains(t, f.Kubectl("get", "events", "-n", "rest"), "Restored")
	t.Logf("%d copies written with %d member writes; none in %s after", want, creates, quietWindow)

	// A status write is no drift, but a change of the spec there still is.
	_, err = f.Member("cluster1").Resource(services).Namespace("rest").Patch(context.Background(), "lb", types.MergePatchType,
		[]byte(`{"spec":{"selector":{"app":"changed-by-hand"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	f.WaitIn([]string{"cluster1"}, services, "rest", "lb", func(o *unstructured.Unstructured) error {
		if sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector"); sel["app"] != "lb" {
			return fmt.Errorf("selector %v", sel)
		}
		return nil
	})
	f.WaitEvents("lb", "Restored Service rest/lb in cluster cluster1: it was changed there")

	// An update of copies we created is one write each, and leaving out a
	// field their create set still removes it from them: the create's
	// fields are handed over to our applies then, and only then (each
	// first update used to be three writes).
	f.Apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keys, namespace: rest}\ndata: {a: \"1\", b: \"2\"}\n")
	f.WaitIn(two, configMaps, "rest", "keys", hasData(map[string]string{"a": "1", "b": "2"}))
	f.atRest(time.Second)
	before = f.memberWriteCounters()
	f.Kubectl("patch", "configmap", "keys", "-n", "rest", "--type=merge", "-p", `{"data":{"a":"changed"}}`)
	f.WaitIn(two, configMaps, "rest", "keys", hasData(map[string]string{"a": "changed", "b": "2"}))
	f.atRest(time.Second)
	require.Equal(t, float64(len(two)), totalWrites(before, f.memberWriteCounters()), "member writes of the update: one per copy")
	f.Kubectl("patch", "configmap", "keys", "-n", "rest", "--type=merge", "-p", `{"data":{"b":null}}`)
	f.WaitIn(two, configMaps, "rest", "keys", hasData(map[string]string{"a": "changed"}))
}

// hasData wants a ConfigMap's data to be exactly want.
func hasData(want map[string]string) func(*unstructured.Unstructured) error {
	return func(o *unstructured.Unstructured) error {
		if got, _, _ := unstructured.NestedStringMap(o.Object, "data"); !maps.Equal(got, want) {
			return fmt.Errorf("data %v, want %v", got, want)
		}
		return nil
	}
}

// totalWrites is every member write between two readings of the counters.
func totalWrites(before, after map[string]float64) float64 {
	total := 0.0
	for k, v := range after {
		total += v - before[k]
	}
	return total
}

var atRestDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// writesSince counts the member writes between two readings of the
// counters: creates, and the other counters that moved.
func writesSince(before, after map[string]float64) (creates int, others []string) {
	for k, v := range after {
		if v == before[k] {
			continue
		}
		if strings.Contains(k, `verb="create"`) {
			creates += int(v - before[k])
			continue
		}
		others = append(others, fmt.Sprintf("%s %v->%v", k, before[k], v))
	}
	return creates, others
}

func hasLoadBalancerAddress(o *unstructured.Unstructured) error {
	if err := labelled(o); err != nil {
		return err
	}
	ingress, _, _ := unstructured.NestedSlice(o.Object, "status", "loadBalancer", "ingress")
	if len(ingress) == 0 {
		return fmt.Errorf("no status.loadBalancer.ingress yet")
	}
	return nil
}

func hasStatusConditions(o *unstructured.Unstructured) error {
	if err := labelled(o); err != nil {
		return err
	}
	conditions, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	if len(conditions) == 0 {
		return fmt.Errorf("no status.conditions yet")
	}
	return nil
}
