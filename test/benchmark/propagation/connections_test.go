package propagation

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/federation-v1/federation/test/memberenv"
)

// memberAPIPorts are the ports of the members' kube-apiservers.
func (bn *bench) memberAPIPorts() map[int]bool {
	ports := map[int]bool{}
	for _, m := range bn.env.Members {
		ports[m.Ports[memberenv.KubeAPIServer]] = true
	}
	return ports
}

// connectionsTo counts pid's established TCP connections to any of ports
// on this machine: its socket descriptors, found in the connection tables
// of its network namespace.
func connectionsTo(pid int, ports map[int]bool) (int, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, fmt.Errorf("listing the descriptors of pid %d: %w", pid, err)
	}
	sockets := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			sockets[strings.TrimSuffix(inode, "]")] = true
		}
	}
	count := 0
	for _, table := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			return 0, err
		}
		n, err := countEstablished(string(b), sockets, ports)
		if err != nil {
			return 0, err
		}
		count += n
	}
	return count, nil
}

// tcpEstablished is the state column of an established connection.
const tcpEstablished = "01"

// countEstablished counts the rows of a /proc/net/tcp table that are
// established connections of one of the sockets to one of the ports.
func countEstablished(table string, sockets map[string]bool, ports map[int]bool) (int, error) {
	count := 0
	for _, line := range strings.Split(table, "\n")[1:] {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != tcpEstablished || !sockets[f[9]] {
			continue
		}
		_, hexPort, ok := strings.Cut(f[2], ":")
		port, err := strconv.ParseInt(hexPort, 16, 32)
		if !ok || err != nil {
			return 0, fmt.Errorf("unexpected remote address %q in a TCP table", f[2])
		}
		if ports[int(port)] {
			count++
		}
	}
	return count, nil
}
