package faults_test

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The apiservers of an HA plane share one port, so which of them a client
// talks to is the kernel's choice; the kernel's tables tell it: a client's
// established connections to the port, and which process holds the other
// end of each.

// tcpEstablished is the state of an established socket in /proc/net/tcp.
const tcpEstablished = "01"

// tcpSocket is a line of /proc/net/tcp{,6}.
type tcpSocket struct {
	localPort, remotePort int
	inode                 string
}

// establishedSockets reads the established TCP sockets of this network
// namespace.
func establishedSockets() ([]tcpSocket, error) {
	var out []tcpSocket
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		lines := bufio.NewScanner(f)
		for lines.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(lines.Text())
			if len(fields) < 10 || fields[3] != tcpEstablished {
				continue
			}
			local, err1 := hexPort(fields[1])
			remote, err2 := hexPort(fields[2])
			if err1 != nil || err2 != nil {
				continue // the header line
			}
			out = append(out, tcpSocket{localPort: local, remotePort: remote, inode: fields[9]})
		}
		err = lines.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// hexPort reads the port of an address as /proc/net/tcp writes it (HEXIP:HEXPORT).
func hexPort(addr string) (int, error) {
	_, port, ok := strings.Cut(addr, ":")
	if !ok {
		return 0, fmt.Errorf("no port in %q", addr)
	}
	p, err := strconv.ParseUint(port, 16, 16)
	return int(p), err
}

// socketInodes are the inodes of the sockets process pid holds open.
func socketInodes(pid int) (map[string]bool, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(dir + "/" + fd.Name())
		if err != nil {
			continue // closed since it was listed
		}
		if inode, ok := strings.CutPrefix(target, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	return inodes, nil
}

// serversOf counts, for each of servers (pid by name), the connections
// that process client has open to it on port.
func serversOf(client int, port int, servers map[string]int) (map[string]int, error) {
	sockets, err := establishedSockets()
	if err != nil {
		return nil, err
	}
	mine, err := socketInodes(client)
	if err != nil {
		return nil, err
	}
	// The client's ends name the local ports the servers' ends talk to.
	clientPorts := map[int]bool{}
	for _, s := range sockets {
		if mine[s.inode] && s.remotePort == port {
			clientPorts[s.localPort] = true
		}
	}
	serverEnds := map[string]bool{}
	for _, s := range sockets {
		if s.localPort == port && clientPorts[s.remotePort] {
			serverEnds[s.inode] = true
		}
	}
	counts := map[string]int{}
	for name, pid := range servers {
		held, err := socketInodes(pid)
		if err != nil {
			return nil, fmt.Errorf("%s (pid %d): %w", name, pid, err)
		}
		for inode := range held {
			if serverEnds[inode] {
				counts[name]++
			}
		}
	}
	return counts, nil
}
