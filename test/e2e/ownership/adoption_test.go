package ownership_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/poll"
)

func init() {
	cases["adoption: a member's own ConfigMap keeps its data and UID by default"] = membersOwnConfigMapIsKept
	cases["adoption: asked for, the member's object is overwritten, and left on delete"] = adoptedConfigMapIsLeftOnDelete
	cases["deletion: a federated namespace leaves a member namespace it did not create, and foreign objects"] = namespaceDeletionLeavesForeignObjects
	cases["conflicts: two federations on one member do not fight"] = twoFederationsDoNotFight
}

// memberNamespace creates namespace ns in a member, as its own team would,
// and removes it when the test ends.
func (f *fixture) memberNamespace(cluster, ns string) types.UID {
	f.t.Helper()
	made, err := f.member(cluster).CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(f.t, err)
	f.t.Cleanup(func() { f.deleteMemberNamespace(cluster, ns) })
	return made.UID
}

func (f *fixture) deleteMemberNamespace(cluster, ns string) {
	err := f.member(cluster).CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		f.t.Logf("deleting namespace %s in %s: %v", ns, cluster, err)
	}
}

// memberConfigMap creates a ConfigMap in a member with data x=value, as
// the member's team would.
func (f *fixture) memberConfigMap(cluster, ns, name, value string) types.UID {
	f.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"x": value}}
	made, err := f.member(cluster).CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{})
	require.NoError(f.t, err)
	return made.UID
}

// federatedNamespace creates namespace ns at federation fed, to be adopted
// where the members have it, and deletes it when the test ends.
func (f *fixture) federatedNamespace(fed, ns string) {
	f.t.Helper()
	f.apply(fed, fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  annotations:\n    %s: adopt\n", ns, federationv1beta1.ConflictResolutionAnnotation))
	f.t.Cleanup(func() {
		_, _ = f.kubectl("--context="+fed, "delete", "namespace", ns, "--ignore-not-found", "--timeout=2m")
	})
}

// waitMemberNamespaces waits until namespace ns is labelled by federation
// "fed" in every member.
func (f *fixture) waitMemberNamespaces(ns string) {
	f.t.Helper()
	for _, c := range members {
		f.until(fmt.Sprintf("namespace %s labelled in %s", ns, c), func(ctx context.Context) error {
			got, err := f.member(c).CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got.Labels[federationv1beta1.FederationLabel] != "fed" {
				return fmt.Errorf("labels %v", got.Labels)
			}
			return nil
		})
	}
}

// federatedConfigMap is a ConfigMap manifest with data x=value and
// annotations.
func federatedConfigMap(ns, name, value string, annotations ...string) string {
	m := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n", name, ns)
	if len(annotations) > 0 {
		m += "  annotations:\n"
		for i := 0; i+1 < len(annotations); i += 2 {
			m += fmt.Sprintf("    %s: %q\n", annotations[i], annotations[i+1])
		}
	}
	return m + fmt.Sprintf("data:\n  x: %q\n", value)
}

func (f *fixture) until(what string, check func(ctx context.Context) error) {
	f.t.Helper()
	require.NoError(f.t, poll.Until(context.Background(), converge, what, check))
}

// waitEvent waits until federation fed tells of an event of reason on
// the object named name in namespace ns whose message has every one of
// contains, and returns the message.
func (f *fixture) waitEvent(fed, ns, name, reason string, contains ...string) string {
	f.t.Helper()
	var found string
	f.until(fmt.Sprintf("%s event on %s/%s at %s", reason, ns, name, fed), func(ctx context.Context) error {
		out, err := f.kubectl("--context="+fed, "get", "events", "-n", ns, "--field-selector", "involvedObject.name="+name+",reason="+reason,
			"-o", `jsonpath={range .items[*]}{.message}{"\n"}{end}`)
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		for _, line := range strings.Split(out, "\n") {
			ok := line != ""
			for _, c := range contains {
				ok = ok && strings.Contains(line, c)
			}
			if ok {
				found = line
				return nil
			}
		}
		return fmt.Errorf("events: %q", out)
	})
	return found
}

// configMapIn reads a member's ConfigMap.
func (f *fixture) configMapIn(ctx context.Context, cluster, ns, name string) (*corev1.ConfigMap, error) {
	return f.member(cluster).CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
}

// waitConfigMap waits until a member's ConfigMap has data x=value.
func (f *fixture) waitConfigMap(cluster, ns, name, value string) *corev1.ConfigMap {
	f.t.Helper()
	var got *corev1.ConfigMap
	f.until(fmt.Sprintf("%s/%s with x=%s in %s", ns, name, value, cluster), func(ctx context.Context) error {
		cm, err := f.configMapIn(ctx, cluster, ns, name)
		if err != nil {
			return err
		}
		if cm.Data["x"] != value {
			return fmt.Errorf("x=%q", cm.Data["x"])
		}
		got = cm
		return nil
	})
	return got
}

// waitGone waits until get returns NotFound.
func (f *fixture) waitGone(what string, get func(ctx context.Context) error) {
	f.t.Helper()
	f.until(what+" gone", func(ctx context.Context) error {
		err := get(ctx)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return errors.New("still there")
	})
}

func membersOwnConfigMapIsKept(f *fixture) {
	ns := "team"
	for _, c := range members {
		f.memberNamespace(c, ns)
	}
	f.federatedNamespace("fed", ns)
	f.waitMemberNamespaces(ns)
	uid := f.memberConfigMap("cluster1", ns, "important", "member")

	f.apply("fed", federatedConfigMap(ns, "important", "fed"))
	msg := f.waitEvent("fed", ns, "important", "ConflictInCluster", "cluster cluster1", "not created by this federation")
	assert.Contains(f.t, msg, federationv1beta1.ConflictResolutionAnnotation)
	f.waitConfigMap("cluster2", ns, "important", "fed")
	got, err := f.configMapIn(context.Background(), "cluster1", ns, "important")
	require.NoError(f.t, err)
	assert.Equal(f.t, "member", got.Data["x"], "the member's data")
	assert.Equal(f.t, uid, got.UID, "the member's object")
	assert.Empty(f.t, got.Labels[federationv1beta1.FederationLabel])

	f.fed("delete", "configmap", "important", "-n", ns, "--timeout=2m")
	f.waitGone("cluster2's copy", func(ctx context.Context) error {
		_, err := f.configMapIn(ctx, "cluster2", ns, "important")
		return err
	})
	got, err = f.configMapIn(context.Background(), "cluster1", ns, "important")
	require.NoError(f.t, err, "the member's object stays")
	assert.Equal(f.t, uid, got.UID)
	assert.Equal(f.t, "member", got.Data["x"])
}

func adoptedConfigMapIsLeftOnDelete(f *fixture) {
	ns := "team-adopt"
	for _, c := range members {
		f.memberNamespace(c, ns)
	}
	f.federatedNamespace("fed", ns)
	f.waitMemberNamespaces(ns)
	uid := f.memberConfigMap("cluster1", ns, "important", "member")

	f.apply("fed", federatedConfigMap(ns, "important", "fed", federationv1beta1.ConflictResolutionAnnotation, federationv1beta1.ConflictResolutionAdopt))
	got := f.waitConfigMap("cluster1", ns, "important", "fed")
	assert.Equal(f.t, uid, got.UID, "adopted, not replaced")
	assert.Equal(f.t, "true", got.Annotations[federationv1beta1.AdoptedAnnotation])
	assert.Equal(f.t, "fed", got.Labels[federationv1beta1.FederationLabel])
	assert.NotEmpty(f.t, got.Labels[federationv1beta1.FederationUIDLabel])
	f.waitConfigMap("cluster2", ns, "important", "fed")
	f.waitEvent("fed", ns, "important", "AdoptInCluster", "cluster1")

	f.fed("delete", "configmap", "important", "-n", ns, "--timeout=2m")
	f.waitGone("cluster2's copy", func(ctx context.Context) error {
		_, err := f.configMapIn(ctx, "cluster2", ns, "important")
		return err
	})
	f.until("cluster1's adopted ConfigMap left without our labels", func(ctx context.Context) error {
		cm, err := f.configMapIn(ctx, "cluster1", ns, "important")
		if err != nil {
			return err
		}
		if cm.UID != uid {
			return poll.Abort(fmt.Errorf("replaced: UID %s, was %s", cm.UID, uid))
		}
		for _, k := range []string{federationv1beta1.FederationLabel, federationv1beta1.FederationUIDLabel} {
			if _, ok := cm.Labels[k]; ok {
				return fmt.Errorf("labels %v", cm.Labels)
			}
		}
		if _, ok := cm.Annotations[federationv1beta1.AdoptedAnnotation]; ok {
			return fmt.Errorf("annotations %v", cm.Annotations)
		}
		return nil
	})
}

// namespaceStays checks that a member's namespace is still there, not
// being deleted, with the same UID.
func (f *fixture) namespaceStays(cluster, ns string, uid types.UID) {
	f.t.Helper()
	got, err := f.member(cluster).CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	require.NoError(f.t, err)
	assert.Equal(f.t, uid, got.UID)
	assert.Nil(f.t, got.DeletionTimestamp, "namespace %s in %s is not being deleted", ns, cluster)
	assert.Empty(f.t, got.Labels[federationv1beta1.FederationLabel], "orphaned")
}

func namespaceDeletionLeavesForeignObjects(f *fixture) {
	ctx := context.Background()
	// A namespace of cluster1's own, adopted.
	ns := "shared"
	uid := f.memberNamespace("cluster1", ns)
	f.memberConfigMap("cluster1", ns, "team-cm", "member")
	f.t.Cleanup(func() { f.deleteMemberNamespace("cluster2", ns) })
	f.federatedNamespace("fed", ns)
	f.waitMemberNamespaces(ns)
	f.apply("fed", federatedConfigMap(ns, "fed-cm", "fed"))
	for _, c := range members {
		f.waitConfigMap(c, ns, "fed-cm", "fed")
	}
	f.fed("delete", "namespace", ns, "--timeout=2m")
	f.waitGone("cluster2's namespace "+ns, func(ctx context.Context) error {
		_, err := f.member("cluster2").CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return err
	})
	f.waitGone("cluster1's copy of fed-cm", func(ctx context.Context) error {
		_, err := f.configMapIn(ctx, "cluster1", ns, "fed-cm")
		return err
	})
	f.namespaceStays("cluster1", ns, uid)
	got, err := f.configMapIn(ctx, "cluster1", ns, "team-cm")
	require.NoError(f.t, err, "the team's ConfigMap stays")
	assert.Equal(f.t, "member", got.Data["x"])

	// A namespace the federation made, where the member's team then put a
	// ConfigMap of its own.
	ns = "made"
	f.t.Cleanup(func() {
		for _, c := range members {
			f.deleteMemberNamespace(c, ns)
		}
	})
	f.federatedNamespace("fed", ns)
	f.waitMemberNamespaces(ns)
	made, err := f.member("cluster1").CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	require.NoError(f.t, err)
	f.memberConfigMap("cluster1", ns, "theirs", "member")
	f.fed("delete", "namespace", ns, "--timeout=2m")
	f.waitEvent("fed", metav1.NamespaceDefault, ns, "OrphanInCluster", "cluster cluster1", "configmaps/theirs")
	f.waitGone("cluster2's namespace "+ns, func(ctx context.Context) error {
		_, err := f.member("cluster2").CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return err
	})
	f.namespaceStays("cluster1", ns, made.UID)
	_, err = f.configMapIn(ctx, "cluster1", ns, "theirs")
	require.NoError(f.t, err, "their ConfigMap stays")
}

func twoFederationsDoNotFight(f *fixture) {
	ctx := context.Background()
	f.u.InitFederation("fed2")
	f.u.MustKubefed("join", "cluster1", "--context=fed2")
	f.t.Cleanup(func() {
		_, _ = f.kubectl("--context=fed2", "delete", "configmap", "shared-name", "shared-name-2", "-n", "default", "--ignore-not-found", "--timeout=1m")
		_, _ = f.u.Kubefed("unjoin", "cluster1", "--context=fed2")
	})
	f.t.Cleanup(func() {
		_, _ = f.kubectl("--context=fed", "delete", "configmap", "shared-name", "shared-name-2", "-n", "default", "--ignore-not-found", "--timeout=1m")
	})
	f.u.WaitClusterStatus("fed2", time.Minute, map[string]string{"cluster1": "Ready"})

	// shared-name is fed's first, shared-name-2 fed2's.
	f.apply("fed", federatedConfigMap("default", "shared-name", "fed"))
	first := f.waitConfigMap("cluster1", "default", "shared-name", "fed")
	f.apply("fed2", federatedConfigMap("default", "shared-name-2", "fed2"))
	second := f.waitConfigMap("cluster1", "default", "shared-name-2", "fed2")
	f.apply("fed2", federatedConfigMap("default", "shared-name", "fed2"))
	f.apply("fed", federatedConfigMap("default", "shared-name-2", "fed"))
	f.waitEvent("fed2", "default", "shared-name", "ConflictInCluster", "cluster cluster1", `belongs to federation "fed"`)
	f.waitEvent("fed", "default", "shared-name-2", "ConflictInCluster", "cluster cluster1", `belongs to federation "fed2"`)

	before := map[string]map[string]float64{"fed": f.writeCounters("fed", "cluster1"), "fed2": f.writeCounters("fed2", "cluster1")}
	deadline := time.Now().Add(time.Minute)
	watched := 0
	err := poll.UntilEvery(ctx, 2*time.Minute, time.Second, "a minute of two federations on cluster1", func(ctx context.Context) error {
		for _, fed := range []string{"fed", "fed2"} {
			now := f.writeCounters(fed, "cluster1")
			for _, verb := range []string{"create", "delete"} {
				require.Equal(f.t, before[fed][verb], now[verb], "%s's %s writes to cluster1", fed, verb)
			}
		}
		for _, want := range []*corev1.ConfigMap{first, second} {
			cm, err := f.configMapIn(ctx, "cluster1", "default", want.Name)
			require.NoError(f.t, err)
			require.Equal(f.t, want.UID, cm.UID, "%s never replaced", want.Name)
			require.Equal(f.t, want.Data, cm.Data, "%s never overwritten", want.Name)
		}
		watched++
		if time.Now().Before(deadline) {
			return errors.New("watching")
		}
		return nil
	})
	require.NoError(f.t, err)
	f.t.Logf("checked %d times in a minute", watched)
}
