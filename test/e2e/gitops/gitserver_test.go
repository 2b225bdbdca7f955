package gitops_test

import (
	"context"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// gitServer serves the bare repositories under root over git's smart HTTP
// protocol, which source-controller speaks, with git's own http-backend
// behind Go's CGI handler, on loopback.
type gitServer struct {
	root string
	srv  *httptest.Server
}

func startGitServer(t *testing.T) *gitServer {
	t.Helper()
	git, err := exec.LookPath("git")
	require.NoError(t, err, "the gitops suite needs git")
	root := t.TempDir()
	srv := httptest.NewServer(&cgi.Handler{
		Path: git,
		Args: []string{"http-backend"},
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	})
	t.Cleanup(srv.Close)
	return &gitServer{root: root, srv: srv}
}

// repository makes an empty bare repository name.git and a working copy
// whose pushes go to it; it returns the working copy and the URL a git
// client clones.
func (s *gitServer) repository(t *testing.T, name string) (*workingCopy, string) {
	t.Helper()
	bare := filepath.Join(s.root, name+".git")
	runGit(t, "", "init", "--bare", "--initial-branch=main", bare)
	work := &workingCopy{t: t, dir: t.TempDir()}
	runGit(t, work.dir, "init", "--initial-branch=main")
	runGit(t, work.dir, "remote", "add", "origin", bare)
	return work, s.srv.URL + "/" + name + ".git"
}

// workingCopy is a git working tree whose commits are pushed to the
// served repository.
type workingCopy struct {
	t   *testing.T
	dir string
}

// commit writes files (path: content; empty content removes the file),
// commits, pushes to main and returns the commit's SHA-1.
func (w *workingCopy) commit(message string, files map[string]string) string {
	w.t.Helper()
	for path, content := range files {
		full := filepath.Join(w.dir, path)
		if content == "" {
			require.NoError(w.t, os.Remove(full))
			continue
		}
		require.NoError(w.t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(w.t, os.WriteFile(full, []byte(content), 0o644))
	}
	runGit(w.t, w.dir, "add", "--all")
	runGit(w.t, w.dir, "commit", "--quiet", "-m", message)
	runGit(w.t, w.dir, "push", "--quiet", "origin", "main")
	return runGit(w.t, w.dir, "rev-parse", "HEAD")
}

// runGit runs git in dir with a fixed identity and no user or system
// configuration, and returns its trimmed output.
func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=gitops e2e", "GIT_AUTHOR_EMAIL=gitops@example.com",
		"GIT_COMMITTER_NAME=gitops e2e", "GIT_COMMITTER_EMAIL=gitops@example.com")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s:\n%s", strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}
