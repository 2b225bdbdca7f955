package ownership_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/federation-v1/federation/pkg/poll"
)

func init() {
	cases["stale view: removing the federation label from a member namespace deletes nothing"] = staleNamespaceLabel
}

// churnHold is how long the copies must stay untouched after the member
// namespace's label went.
const churnHold = 30 * time.Second

// churnCopy is one of the federated objects in namespace churn.
type churnCopy struct {
	gvr  schema.GroupVersionResource
	name string
}

var churnCopies = []churnCopy{
	{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "one"},
	{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "two"},
	{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "three"},
	{schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "secret"},
	{schema.GroupVersionResource{Version: "v1", Resource: "services"}, "web"},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "web"},
}

const churnManifest = `apiVersion: v1
kind: Namespace
metadata: {name: churn}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: one, namespace: churn}
data: {k: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: two, namespace: churn}
data: {k: "2"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: three, namespace: churn}
data: {k: "3"}
---
apiVersion: v1
kind: Secret
metadata: {name: secret, namespace: churn}
stringData: {password: s3cr3t}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: churn}
spec:
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: churn}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: c
        image: registry.k8s.io/pause:3.10
`

// federationNameLabel is the label on our copies.
const federationNameLabel = "federation.kubernetes.io/federation-name"

// staleNamespaceLabel takes the federation label off a member namespace
// holding six copies: placement reads a label-filtered cache of member
// namespaces, and must not take the namespace's absence from it for a
// reason to remove the copies. Every copy keeps its UID, no member delete
// is made, and our label comes back on the namespace; then again with the
// namespace's labels churning.
func staleNamespaceLabel(f *fixture) {
	t := f.t
	ctx := context.Background()
	f.apply("fed", churnManifest)
	t.Cleanup(func() {
		_, _ = f.kubectl("--context=fed", "delete", "namespace", "churn", "--ignore-not-found", "--wait=false")
	})
	uids := f.churnUIDs(ctx)

	deletes := f.memberDeletes("cluster1")
	f.memberKubectl("cluster1", "label", "namespace", "churn", federationNameLabel+"-")
	f.holdChurnCopies(ctx, uids)
	f.waitNamespaceLabelled(ctx, "cluster1")
	assert.Equal(t, deletes, f.memberDeletes("cluster1"), "member deletes in cluster1 after the label went")

	// An unrelated label added and removed ten times, our label taken off
	// each time.
	for i := range 10 {
		f.memberKubectl("cluster1", "label", "namespace", "churn", fmt.Sprintf("churn=round-%d", i), "--overwrite")
		f.memberKubectl("cluster1", "label", "namespace", "churn", federationNameLabel+"-", "churn-")
	}
	f.holdChurnCopies(ctx, uids)
	f.waitNamespaceLabelled(ctx, "cluster1")
	assert.Equal(t, deletes, f.memberDeletes("cluster1"), "member deletes in cluster1 after the label churn")
}

// churnUIDs waits until every copy is in both members and returns their
// UIDs by cluster and copy.
func (f *fixture) churnUIDs(ctx context.Context) map[string]types.UID {
	f.t.Helper()
	uids := map[string]types.UID{}
	require.NoError(f.t, poll.Until(ctx, converge, "the copies in namespace churn in both members", func(ctx context.Context) error {
		for _, c := range members {
			for _, cp := range churnCopies {
				obj, err := f.memberDynamic(c).Resource(cp.gvr).Namespace("churn").Get(ctx, cp.name, metav1.GetOptions{})
				if err != nil {
					return fmt.Errorf("%s %s in %s: %w", cp.gvr.Resource, cp.name, c, err)
				}
				uids[c+"/"+cp.gvr.Resource+"/"+cp.name] = obj.GetUID()
			}
		}
		return nil
	}))
	return uids
}

// holdChurnCopies checks, at every poll for churnHold, that every copy is
// still there with its UID.
func (f *fixture) holdChurnCopies(ctx context.Context, uids map[string]types.UID) {
	f.t.Helper()
	deadline := time.Now().Add(churnHold)
	errHolding := errors.New("holding")
	err := poll.Until(ctx, churnHold+converge, "the copies to stay untouched", func(ctx context.Context) error {
		for _, c := range members {
			for _, cp := range churnCopies {
				k := c + "/" + cp.gvr.Resource + "/" + cp.name
				obj, err := f.memberDynamic(c).Resource(cp.gvr).Namespace("churn").Get(ctx, cp.name, metav1.GetOptions{})
				if err != nil {
					return poll.Abort(fmt.Errorf("%s: %w", k, err))
				}
				if obj.GetUID() != uids[k] {
					return poll.Abort(fmt.Errorf("%s was recreated: UID %s, was %s", k, obj.GetUID(), uids[k]))
				}
			}
		}
		if time.Now().Before(deadline) {
			return errHolding
		}
		return nil
	})
	require.NoError(f.t, err)
}

// waitNamespaceLabelled waits until the member's namespace churn carries
// our label again (the case goes on when it does not, to tell of the
// copies too).
func (f *fixture) waitNamespaceLabelled(ctx context.Context, cluster string) {
	f.t.Helper()
	assert.NoError(f.t, poll.Until(ctx, converge, "our label back on namespace churn in "+cluster, func(ctx context.Context) error {
		ns, err := f.member(cluster).CoreV1().Namespaces().Get(ctx, "churn", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := ns.Labels[federationNameLabel]; got != "fed" {
			return fmt.Errorf("label %s is %q", federationNameLabel, got)
		}
		return nil
	}))
}

// memberKubectl runs kubectl against a member and fails on error.
func (f *fixture) memberKubectl(cluster string, args ...string) {
	f.t.Helper()
	out, err := f.kubectl(append([]string{"--context=" + cluster}, args...)...)
	require.NoError(f.t, err, out)
}

// memberDeletes is federation "fed"'s count of member deletes in cluster.
func (f *fixture) memberDeletes(cluster string) float64 {
	f.t.Helper()
	return f.writeCounters("fed", cluster)["delete"]
}
