package ownership_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
)

func init() {
	cases["restore: backup, create, restore leaves the new copy and reports it"] = restoreLeavesNewCopies
}

// restoreLeavesNewCopies backs the federation up, creates a ConfigMap,
// restores the backup: the ConfigMap's copies, made after the backup, stay
// in the members untouched, are counted as strays and listed by kubefed
// strays, whose --clean deletes them. The backup also holds the pending
// tombstone of an earlier ConfigMap "reborn", created again after the
// backup: restoring the tombstone must not delete the later object's
// copies (they record its UID), which become strays too.
func restoreLeavesNewCopies(f *fixture) {
	t := f.t
	ctx := context.Background()
	// kubefed fails this case, not TestOwnership (as f.u.MustKubefed would).
	kubefed := func(args ...string) string {
		t.Helper()
		out, err := f.u.Kubefed(args...)
		require.NoError(t, err, "kubefed %s:\n%s", strings.Join(args, " "), out)
		return out
	}
	// "reborn" is deleted while nothing buries its tombstone, and backed
	// up so.
	f.apply("fed", federatedConfigMap("default", "reborn", "first"))
	t.Cleanup(func() {
		_, _ = f.kubectl("--context=fed", "delete", "configmap", "reborn", "-n", "default", "--ignore-not-found", "--wait=false")
		for _, c := range members {
			_ = f.member(c).CoreV1().ConfigMaps("default").Delete(ctx, "reborn", metav1.DeleteOptions{})
		}
	})
	for _, c := range members {
		f.waitConfigMap(c, "default", "reborn", "first")
	}
	// Earlier cases' deletions are buried first, so that reborn's is the
	// only tombstone the backup holds.
	f.until("no tombstone pending", func(context.Context) error {
		if left := f.tombstones(); len(left) > 0 {
			return fmt.Errorf("tombstones left: %v", left)
		}
		return nil
	})
	plane := f.u.Plane("fed")
	cms := plane.Instances(processplane.ControllerManager)
	require.Len(t, cms, 1, "one controller manager runs")
	require.NoError(t, plane.StopInstance(cms[0]))
	f.fed("delete", "configmap", "reborn", "-n", "default")
	require.Len(t, f.tombstones(), 1, "the deletion of reborn is recorded, and nothing buries it")

	file := filepath.Join(t.TempDir(), "fed.snapshot")
	out := kubefed("backup", "fed", "-o", file)
	assert.Contains(t, out, "backed up to "+file)
	st, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the snapshot holds the federation's Secrets")

	// The controller manager back: reborn's copies go with its tombstone,
	// then reborn is made again.
	kubefed("start", "fed")
	for _, c := range members {
		f.waitGone("reborn in "+c, func(ctx context.Context) error {
			_, err := f.configMapIn(ctx, c, "default", "reborn")
			return err
		})
	}
	f.apply("fed", federatedConfigMap("default", "reborn", "second"))
	rebornUIDs := map[string]types.UID{}
	for _, c := range members {
		rebornUIDs[c] = f.waitConfigMap(c, "default", "reborn", "second").UID
	}

	f.apply("fed", `apiVersion: v1
kind: ConfigMap
metadata: {name: after-backup, namespace: default}
data: {made: after the backup}
`)
	t.Cleanup(func() {
		_, _ = f.kubectl("--context=fed", "delete", "configmap", "after-backup", "-n", "default", "--ignore-not-found", "--wait=false")
		for _, c := range members {
			_ = f.member(c).CoreV1().ConfigMaps("default").Delete(ctx, "after-backup", metav1.DeleteOptions{})
		}
	})
	uids := map[string]types.UID{}
	require.NoError(t, poll.Until(ctx, converge, "after-backup in both members", func(ctx context.Context) error {
		for _, c := range members {
			cm, err := f.member(c).CoreV1().ConfigMaps("default").Get(ctx, "after-backup", metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("%s: %w", c, err)
			}
			uids[c] = cm.UID
		}
		return nil
	}))

	out, err = f.u.Kubefed("restore", "fed", "-f", file)
	require.Error(t, err, "restoring a running federation is refused")
	assert.Contains(t, out, `federation "fed" is running: stop it first with `+"`kubefed stop fed`")

	kubefed("stop", "fed")
	// Whatever happens, the cases after this one get a running federation.
	t.Cleanup(func() {
		if !f.u.Plane("fed").Running() {
			_, _ = f.u.Kubefed("start", "fed")
		}
	})
	out = kubefed("restore", "fed", "-f", file)
	assert.Contains(t, out, "kubefed start fed")
	aside, err := filepath.Glob(filepath.Join(f.u.PlaneDir("fed"), "data.before-restore-*"))
	require.NoError(t, err)
	assert.Len(t, aside, 1, "the former data is kept:\n%s", out)
	kubefed("start", "fed")
	f.u.WaitClusterStatus("fed", 2*time.Minute, map[string]string{"cluster1": "Ready", "cluster2": "Ready"})

	out, err = f.kubectl("--context=fed", "get", "configmap", "after-backup", "-n", "default")
	require.Error(t, err, "the federation is back to before the ConfigMap:\n%s", out)
	assert.Contains(t, out+err.Error(), "NotFound")

	// The copies stay, the very same objects, for as long as we watch,
	// and reborn's restored tombstone goes without touching them.
	watchUntil := time.Now().Add(30 * time.Second)
	require.NoError(t, poll.Until(ctx, time.Minute, "30 s of the copies untouched, and no tombstone left", func(ctx context.Context) error {
		for name, want := range map[string]map[string]types.UID{"after-backup": uids, "reborn": rebornUIDs} {
			for _, c := range members {
				cm, err := f.member(c).CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return poll.Abort(fmt.Errorf("%s: the stray copy %s must stay: %w", c, name, err))
				}
				if cm.UID != want[c] {
					return poll.Abort(fmt.Errorf("%s: the copy %s was replaced (UID %s, was %s)", c, name, cm.UID, want[c]))
				}
			}
		}
		if left := f.tombstones(); len(left) > 0 {
			return fmt.Errorf("tombstones left: %v", left)
		}
		if time.Now().Before(watchUntil) {
			return errors.New("still watching")
		}
		return nil
	}))

	require.NoError(t, poll.Until(ctx, 2*time.Minute, "federation_stray_copies of after-backup and reborn", func(context.Context) error {
		metrics, err := f.u.ControllerManagerMetrics("fed")
		if err != nil {
			return err
		}
		for _, c := range members {
			want := fmt.Sprintf(`federation_stray_copies{cluster=%q,type="configmaps"} 2`, c)
			if !strings.Contains(metrics, want+"\n") {
				return fmt.Errorf("no %s in /metrics", want)
			}
		}
		return nil
	}))

	out = kubefed("strays", "--context=fed")
	assert.Regexp(t, `(?m)^CLUSTER\s+KIND\s+NAMESPACE\s+NAME\s+AGE$`, out)
	for _, c := range members {
		for _, name := range []string{"after-backup", "reborn"} {
			assert.Regexp(t, `(?m)^`+c+`\s+ConfigMap\s+default\s+`+name+`\s`, out)
		}
	}

	out = kubefed("strays", "--context=fed", "--clean")
	for _, c := range members {
		for _, name := range []string{"after-backup", "reborn"} {
			assert.Contains(t, out, "deleted ConfigMap default/"+name+" in cluster "+c)
			_, err := f.member(c).CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
			assert.True(t, apierrors.IsNotFound(err), "%s: the stray %s is cleaned: %v", c, name, err)
		}
	}
	out = kubefed("strays", "--context=fed")
	assert.NotContains(t, out, "after-backup")
	assert.NotContains(t, out, "reborn")
}

// tombstones are the names of the tombstones at the federation.
func (f *fixture) tombstones() []string {
	f.t.Helper()
	out := f.fed("get", "configmaps", "-n", "federation-system", "-l", "federation.kubernetes.io/tombstone", "-o", "name")
	return strings.Fields(out)
}
