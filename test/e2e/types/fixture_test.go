package types_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
)

// converge bounds how long propagation and status may take here.
const converge = 60 * time.Second

var (
	serviceAccounts = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	statefulSets    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	cronJobs        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}
	pdbs            = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}
	networkPolicies = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}
	claims          = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	volumes         = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
	limitRanges     = schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}
	quotas          = schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}
	pods            = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

	three = []string{"cluster1", "cluster2", "cluster3"}
	// gold are the clusters labelled tier=gold; cluster3 is silver.
	gold = []string{"cluster1", "cluster2"}
)

// goldOnly is the cluster selector annotation, as a YAML map entry, that
// places an object in the gold clusters only.
const goldOnly = `federation.alpha.kubernetes.io/cluster-selector: '[{"key":"tier","operator":"==","values":["gold"]}]'`

// fixture is the federation "fed" with its three members.
type fixture struct {
	fedenv.Fixture
}

func (f *fixture) in(t *testing.T) *fixture {
	c := *f
	c.T = t
	return &c
}

// field returns the value at path of obj as a string ("" when absent).
func field(obj *unstructured.Unstructured, path ...string) string {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if !found || err != nil {
		return ""
	}
	return fmt.Sprint(v)
}

// is checks that the field at path of a copy is want.
func is(want string, path ...string) func(*unstructured.Unstructured) error {
	return func(obj *unstructured.Unstructured) error {
		if got := field(obj, path...); got != want {
			return fmt.Errorf("%s is %q, want %q", strings.Join(path, "."), got, want)
		}
		return nil
	}
}

// placed waits until the object is in the clusters and nowhere else.
func (f *fixture) placed(gvr schema.GroupVersionResource, ns, name string, in []string) {
	f.T.Helper()
	f.WaitIn(in, gvr, ns, name, is("fed", "metadata", "labels", federationv1beta1.FederationLabel))
	var out []string
	for _, c := range three {
		if !contains(in, c) {
			out = append(out, c)
		}
	}
	if len(out) > 0 {
		f.WaitAbsent(out, gvr, ns, name)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// repaired changes the copy in cluster with a JSON merge patch, as someone
// with access to the member would, and waits until check accepts the copy
// again.
func (f *fixture) repaired(cluster string, gvr schema.GroupVersionResource, ns, name, patch string, check func(*unstructured.Unstructured) error) {
	f.T.Helper()
	_, err := f.Member(cluster).Resource(gvr).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	require.NoError(f.T, err, "changing %s %s/%s in %s", gvr.Resource, ns, name, cluster)
	f.WaitIn([]string{cluster}, gvr, ns, name, check)
}

// waitFed waits until kubectl's jsonpath of the federated object gives want.
func (f *fixture) waitFed(resource, ns, name, jsonpath, want string) {
	f.T.Helper()
	f.waitFedWithin(converge, resource, ns, name, jsonpath, func(got string) bool { return got == want }, fmt.Sprintf("%q", want))
}

// waitFedWithin waits until ok accepts kubectl's jsonpath of the federated object.
func (f *fixture) waitFedWithin(timeout time.Duration, resource, ns, name, jsonpath string, ok func(string) bool, what string) string {
	f.T.Helper()
	var got string
	require.NoError(f.T, poll.Until(context.Background(), timeout, fmt.Sprintf("%s %s/%s: %s is %s", resource, ns, name, jsonpath, what), func(ctx context.Context) error {
		out, err := f.User.Kubectl().Run(ctx, "--context=fed", "-n", ns, "get", resource, name, "-o", "jsonpath="+jsonpath)
		if err != nil {
			return err
		}
		got = strings.TrimSpace(out)
		if !ok(got) {
			return fmt.Errorf("it is %q", got)
		}
		return nil
	}))
	return got
}

// deleted deletes the federated object with kubectl and waits until no
// member holds it.
func (f *fixture) deleted(resource string, gvr schema.GroupVersionResource, ns, name string) {
	f.T.Helper()
	f.Kubectl("-n", ns, "delete", resource, name)
	f.WaitAbsent(three, gvr, ns, name)
}
