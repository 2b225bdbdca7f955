package processplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
)

// The embedded etcd as pkg/embeddedetcd starts it in the plane's data
// folder: a restored member must match it, or etcd would not start on it.
const (
	dataFolder = "data"
	// etcdFolder is the embedded etcd's directory inside the data folder.
	etcdFolder = "etcd"
	// etcdMemberName is embeddedetcd's cfg.Name.
	etcdMemberName = "federation"
	// etcdClusterToken is etcd's default initial cluster token, which
	// embeddedetcd keeps.
	etcdClusterToken = "etcd-cluster"
	// restoredPeerURL is recorded as the restored member's peer URL; the
	// member is alone, so the URL is never dialled, and the embedded etcd
	// advertises a fresh one each start anyway.
	restoredPeerURL = "http://127.0.0.1:2380"
	// restoreRevisionBump lifts the restored revision above any the
	// federation's clients saw before, as Kubernetes advises for restores,
	// so that no watch or cache takes the older data for the newer.
	restoreRevisionBump = 1_000_000_000
)

// snapshotTimeout bounds taking a snapshot.
const snapshotTimeout = 5 * time.Minute

// ErrExternalEtcd: the plane keeps its data in an etcd it does not run.
var ErrExternalEtcd = errors.New("uses an external etcd")

// SnapshotInfo describes a snapshot file.
type SnapshotInfo struct {
	Revision  int64
	TotalKeys int
	Size      int64
}

// Backup writes an etcd snapshot of the running plane to file (0600: it
// holds the federation's whole state, Secrets too, if sealed). Its etcd
// must run: a single plane's apiserver, whose embedded etcd serves the
// snapshot, or an HA plane's cluster (one member answers for all).
func (p *Plane) Backup(ctx context.Context, file string) (*SnapshotInfo, error) {
	if err := p.ownsEtcd(); err != nil {
		return nil, err
	}
	if !p.etcdRuns() {
		return nil, fmt.Errorf("federation %q is stopped: start it with `kubefed start %s` to back it up (%s)", p.Name, p.Name, p.etcdWhere())
	}
	client, err := p.EtcdClient()
	if err != nil {
		return nil, err
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, snapshotTimeout)
	defer cancel()
	stream, err := client.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("taking a snapshot of federation %q: %w", p.Name, err)
	}
	defer stream.Close()
	if err := writeFileAtomic(file, stream); err != nil {
		return nil, fmt.Errorf("writing the snapshot of federation %q to %s: %w", p.Name, file, err)
	}
	return snapshotStatus(file)
}

// writeFileAtomic writes r to file through a temporary file beside it, so
// that a failed backup never leaves a truncated snapshot under file's name.
func writeFileAtomic(file string, r io.Reader) error {
	tmp := file + ".part"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(tmp, file)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// snapshotStatus checks a snapshot file (its hash too) and describes it.
func snapshotStatus(file string) (*SnapshotInfo, error) {
	st, err := snapshot.NewV3(zap.NewNop()).Status(file)
	if err != nil {
		return nil, fmt.Errorf("%s is not a valid etcd snapshot: %w", file, err)
	}
	return &SnapshotInfo{Revision: st.Revision, TotalKeys: st.TotalKey, Size: st.TotalSize}, nil
}

// Restore replaces the stopped plane's data with the snapshot in file. The
// current data folder is kept beside it, renamed data.before-restore-TIME,
// which Restore returns; each etcd member of an HA plane gets the same
// snapshot. Nothing but the plane's folder is touched: the member clusters
// keep every copy, and copies made after the snapshot become strays for
// `kubefed strays` to report.
func (p *Plane) Restore(file string, now time.Time) (string, error) {
	if err := p.ownsEtcd(); err != nil {
		return "", err
	}
	if p.Running() {
		return "", fmt.Errorf("federation %q is running: stop it first with `kubefed stop %s` (restoring replaces its data), then `kubefed start %s` after the restore", p.Name, p.Name, p.Name)
	}
	if _, err := snapshotStatus(file); err != nil {
		return "", err
	}
	stamp := now.UTC().Format("20060102T150405Z")
	// Restore into a folder of its own first, so that a failed restore
	// leaves the current data in place.
	staging := p.path(dataFolder + ".restoring-" + stamp)
	if err := os.MkdirAll(staging, 0o700); err != nil {
		return "", err
	}
	if err := p.restoreMembers(file, staging); err != nil {
		os.RemoveAll(staging)
		return "", fmt.Errorf("restoring %s into federation %q: %w", file, p.Name, err)
	}
	aside := p.path(dataFolder + ".before-restore-" + stamp)
	if err := os.Rename(p.path(dataFolder), aside); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			os.RemoveAll(staging)
			return "", fmt.Errorf("moving the data of federation %q aside: %w", p.Name, err)
		}
		aside = ""
	}
	if err := os.Rename(staging, p.path(dataFolder)); err != nil {
		return "", fmt.Errorf("moving the restored data of federation %q into place (the former data is in %s): %w", p.Name, aside, err)
	}
	return aside, nil
}

// restoreMembers makes the data directories of the plane's etcd in the
// data folder dataDir from a snapshot: for a lone member as
// pkg/embeddedetcd runs it, or for each member of an HA plane's cluster, all
// from the same snapshot, as a new cluster of the same members.
func (p *Plane) restoreMembers(file, dataDir string) error {
	if len(p.EtcdMembers) == 0 {
		return restoreSnapshot(file, filepath.Join(dataDir, etcdFolder), etcdMemberName, restoredPeerURL,
			etcdMemberName+"="+restoredPeerURL, etcdClusterToken)
	}
	for _, m := range p.EtcdMembers {
		if err := restoreSnapshot(file, filepath.Join(dataDir, m.Name), m.Name, m.PeerURL(), p.initialCluster(), p.etcdClusterToken()); err != nil {
			return fmt.Errorf("member %s: %w", m.Name, err)
		}
	}
	return nil
}

// restoreSnapshot makes a new etcd data directory dir of member name
// from a snapshot.
func restoreSnapshot(file, dir, name, peerURL, initialCluster, token string) error {
	return snapshot.NewV3(zap.NewNop()).Restore(snapshot.RestoreConfig{
		SnapshotPath:        file,
		Name:                name,
		OutputDataDir:       dir,
		PeerURLs:            []string{peerURL},
		InitialCluster:      initialCluster,
		InitialClusterToken: token,
		RevisionBump:        restoreRevisionBump,
		MarkCompacted:       true,
	})
}

// etcdRuns reports whether the plane's own etcd serves: an HA plane's
// members (any: etcd says whether they have a quorum), or the apiserver
// with the embedded one.
func (p *Plane) etcdRuns() bool {
	for _, m := range p.EtcdMembers {
		if p.Alive(m.Name) {
			return true
		}
	}
	return len(p.EtcdMembers) == 0 && p.Alive(APIServer)
}

// etcdWhere says where the plane's etcd runs, for messages.
func (p *Plane) etcdWhere() string {
	if len(p.EtcdMembers) > 0 {
		return "its etcd cluster runs as " + strings.Join(p.Instances(EtcdProgram), ", ")
	}
	return "its embedded etcd runs in federation-apiserver"
}

// ownsEtcd refuses a plane on an external etcd: backing that etcd up is
// its operator's business.
func (p *Plane) ownsEtcd() error {
	if servers := joinNonEmpty(p.EtcdServers); servers != "" {
		return fmt.Errorf("federation %q %w (%s): back it up and restore it with that etcd's own tools", p.Name, ErrExternalEtcd, strings.ReplaceAll(servers, ",", ", "))
	}
	return nil
}

// etcdEndpoint is the embedded etcd's unix socket (pkg/embeddedetcd names
// the file client.sock:0).
func (p *Plane) etcdEndpoint() string {
	return "unix://" + p.path(dataFolder, etcdFolder, "client.sock") + ":0"
}
