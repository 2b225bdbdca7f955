package sync_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// Two members that differ: cluster2 lacks the autoscaling API, and each has
// its own ingress controller's address for an Ingress.
func TestTwoDifferentMembers(t *testing.T) {
	u := fedenv.NewUser(t, binDir)
	clusters := memberenv.DefaultClusters(2, 1)
	clusters[1].RuntimeConfig = "autoscaling/v1=false,autoscaling/v2=false"
	env := fedenv.WithMembers(t, u, clusters)
	u.InitFederation("fed")
	u.JoinAll("fed", "cluster1", "cluster2")
	f := newFixture(t, u, env)
	both := []string{"cluster1", "cluster2"}

	f.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: e2e}\n")
	f.WaitIn(both, namespaces, "", "e2e", labelled)
	t.Run("a member lacking an API", func(t *testing.T) { memberLackingAnAPI(f.in(t), both) })
	t.Run("Ingress status is the union of the members'", func(t *testing.T) { ingressStatusUnion(f.in(t), both) })
}

// A member without the autoscaling API rejects the federated HPA: it gets a
// Failed event and the Propagated condition names it, and the other member,
// and the other types, are not held up.
func memberLackingAnAPI(f *fixture, both []string) {
	t := f.T
	hpas := schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}
	for _, ty := range federatedTypes {
		if ty.resource == hpas {
			f.Apply(ty.manifest("e2e", "scaled"))
		}
	}
	f.Apply(configMap("e2e", "unaffected", "", "k: v"))

	f.WaitIn([]string{"cluster1"}, hpas, "e2e", "scaled", labelled)
	f.WaitIn(both, configMaps, "e2e", "unaffected", labelled)
	f.WaitEvents("scaled", "CreateInClusterFailed", "in cluster cluster2 failed")
	require.NoError(t, poll.Until(context.Background(), converge, "the Propagated condition to name cluster2", func(ctx context.Context) error {
		out, err := f.User.Kubectl().Run(ctx, "--context=fed", "get", "hpa", "scaled", "-n", "e2e", "-o",
			`jsonpath={.status.conditions[?(@.type=="Propagated")].status} {.status.conditions[?(@.type=="Propagated")].message}`)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(out, "False ") || !strings.Contains(out, "cluster2") {
			return fmt.Errorf("Propagated condition: %q", out)
		}
		return nil
	}))

	// Later changes still reach the member that has the API.
	f.Kubectl("annotate", "hpa", "scaled", "-n", "e2e", "e2e.test/step=2")
	f.WaitIn([]string{"cluster1"}, hpas, "e2e", "scaled", hasAnnotation("e2e.test/step", "2"))
}

// No ingress controller runs in the members: the test writes each member
// Ingress's status as one would, and the federated Ingress shows both.
func ingressStatusUnion(f *fixture, both []string) {
	t := f.T
	ctx := context.Background()
	ingresses := schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
	for _, ty := range federatedTypes {
		if ty.resource == ingresses {
			f.Apply(ty.manifest("e2e", "front"))
		}
	}
	f.WaitIn(both, ingresses, "e2e", "front", labelled)
	for i, c := range both {
		memberCopy, err := f.MemberObject(ctx, c, ingresses, "e2e", "front")
		require.NoError(t, err)
		require.NoError(t, unstructured.SetNestedSlice(memberCopy.Object, []any{
			map[string]any{"ip": fmt.Sprintf("192.0.2.%d", 10-i)}, map[string]any{"hostname": c + ".lb.example.net"},
		}, "status", "loadBalancer", "ingress"))
		_, err = f.Member(c).Resource(ingresses).Namespace("e2e").UpdateStatus(ctx, memberCopy, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	want := "192.0.2.10 192.0.2.9 | cluster1.lb.example.net cluster2.lb.example.net"
	require.NoError(t, poll.Until(ctx, converge, "the federated Ingress's status", func(ctx context.Context) error {
		out, err := f.User.Kubectl().Run(ctx, "--context=fed", "get", "ingress", "front", "-n", "e2e", "-o",
			`jsonpath={.status.loadBalancer.ingress[*].ip} | {.status.loadBalancer.ingress[*].hostname}`)
		if err != nil {
			return err
		}
		if out != want {
			return fmt.Errorf("status %q, want %q", out, want)
		}
		return nil
	}))
}
