// Package podmanenv runs podman for the tests that run the federation's
// image: it installs podman where it is missing (a fresh CI machine), runs
// it the one way that works on these machines, and builds the image as
// `make image` does.
package podmanenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Flags go before every podman command: crun (podman's default runtime
// here) fails on these machines, and there is no systemd to manage cgroups.
var Flags = []string{"--runtime", "runc", "--cgroup-manager=cgroupfs"}

// ContainersConf is the containers.conf Ensure writes where there is none:
// podman's default ulimits exceed what a container may set here.
const ContainersConf = "[containers]\ndefault_ulimits = []\n"

// containersConfPath is root's containers.conf (a variable for the tests).
var containersConfPath = "/etc/containers/containers.conf"

// Ensure makes podman usable: it installs podman and runc with apt-get
// when either is missing (as root only: otherwise the error says what to
// run), and writes ContainersConf when there is no containers.conf.
func Ensure(ctx context.Context, logf func(format string, args ...any)) error {
	var missing []string
	// catatonit: podman kube play's pause image needs it, and podman only
	// recommends it (installed here without recommends).
	for _, program := range []string{"podman", "runc", "catatonit"} {
		if _, err := exec.LookPath(program); err != nil {
			missing = append(missing, program)
		}
	}
	if len(missing) > 0 {
		if os.Geteuid() != 0 {
			return fmt.Errorf("%s missing, and installing needs root (not running apt-get): run apt-get install -y podman runc catatonit as root",
				strings.Join(missing, " and "))
		}
		logf("installing podman, runc and catatonit with apt-get (%s missing)", strings.Join(missing, " and "))
		if err := aptGetInstall(ctx, "podman", "runc", "catatonit"); err != nil {
			return err
		}
	}
	return ensureContainersConf(logf)
}

// aptGetInstall installs packages, reading the package lists first when
// the install fails without them (a fresh machine has none).
func aptGetInstall(ctx context.Context, packages ...string) error {
	install := func() ([]byte, error) {
		cmd := exec.CommandContext(ctx, "apt-get", append([]string{"install", "-y", "--no-install-recommends"}, packages...)...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.CombinedOutput()
	}
	if _, err := install(); err == nil {
		return nil
	}
	if out, err := exec.CommandContext(ctx, "apt-get", "update").CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get update: %w\n%s", err, out)
	}
	if out, err := install(); err != nil {
		return fmt.Errorf("apt-get install -y %s: %w\n%s", strings.Join(packages, " "), err, out)
	}
	return nil
}

// ensureContainersConf writes ContainersConf when containers.conf is
// missing; one that exists is the machine's own and is left alone. A user
// other than root gets it in their own configuration folder.
func ensureContainersConf(logf func(format string, args ...any)) error {
	path := containersConfPath
	if os.Geteuid() != 0 {
		dir, err := os.UserConfigDir()
		if err != nil {
			return fmt.Errorf("finding containers.conf: %w", err)
		}
		path = filepath.Join(dir, "containers", "containers.conf")
	}
	if _, err := os.Stat(path); err == nil || !errors.Is(err, os.ErrNotExist) {
		return err
	}
	logf("writing %s (default_ulimits = [])", path)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(ContainersConf), 0o644)
}

// Podman is a podman command with Flags.
func Podman(args ...string) *exec.Cmd {
	return exec.Command("podman", append(append([]string(nil), Flags...), args...)...)
}

// BuildImage builds the federation's image from the checkout at root with
// `make image` and returns its reference (localhost/federation:VERSION).
// With nothing changed since the last build it takes seconds: the
// binaries are up to date and podman reuses every layer.
func BuildImage(ctx context.Context, root string, logf func(format string, args ...any)) (string, error) {
	start := time.Now()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "image")
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("make image in %s: %w\n%s", root, err, stderr.String())
	}
	// build/image.sh prints the reference last, alone on its line.
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	ref := strings.TrimSpace(lines[len(lines)-1])
	if ref == "" {
		return "", fmt.Errorf("make image in %s printed no image reference\n%s", root, stderr.String())
	}
	logf("built the image %s in %s", ref, time.Since(start).Round(time.Second))
	return ref, nil
}
