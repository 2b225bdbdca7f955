package processplane

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// tcpTables are the kernel's TCP sockets of this network namespace.
var tcpTables = []string{"/proc/net/tcp", "/proc/net/tcp6"}

// tcpListen is the state of a listening socket in tcpTables.
const tcpListen = "0A"

// listensOn reports whether process pid holds a socket listening on TCP
// port. The apiservers of an HA plane share their port, so that a
// connection to it cannot tell which of them listens; the kernel's tables
// can: the listening sockets' inodes, and the process's open files.
func listensOn(pid, port int) (bool, error) {
	inodes := map[string]bool{}
	for _, table := range tcpTables {
		if err := listeningInodes(table, port, inodes); err != nil {
			return false, err
		}
	}
	if len(inodes) == 0 {
		return false, nil
	}
	fdDir := "/proc/" + strconv.Itoa(pid) + "/fd"
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return false, err
	}
	for _, fd := range fds {
		target, err := os.Readlink(fdDir + "/" + fd.Name())
		if err != nil {
			continue // closed since it was listed
		}
		if inode, ok := strings.CutPrefix(target, "socket:["); ok && inodes[strings.TrimSuffix(inode, "]")] {
			return true, nil
		}
	}
	return false, nil
}

// listeningInodes adds to inodes those of the sockets in table that listen
// on port. A line reads: sl local_address(HEXIP:HEXPORT) rem_address st
// tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
func listeningInodes(table string, port int, inodes map[string]bool) error {
	f, err := os.Open(table)
	if os.IsNotExist(err) {
		return nil // no IPv6
	}
	if err != nil {
		return err
	}
	defer f.Close()
	want := fmt.Sprintf("%04X", port)
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) < 10 || fields[3] != tcpListen {
			continue
		}
		if _, localPort, ok := strings.Cut(fields[1], ":"); ok && localPort == want {
			inodes[fields[9]] = true
		}
	}
	return lines.Err()
}
