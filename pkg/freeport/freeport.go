// Package freeport picks TCP ports for programs that will listen on them
// later, such as the processes of a local control plane.
//
// A port found free is released before its program binds it, and anything
// on the machine may take it in between. The ports most at risk are the
// kernel's ephemeral range: every listen on port 0 and every outgoing
// connection draws from it (a CI run lost kubefed init's apiserver port to
// another HTTP server that way). So Pick draws at random from the ports
// below that range, which the kernel never hands out by itself, and never
// returns a port twice in one process.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// lowest is the first port Pick draws from: ports below it are the
// well-known and registered ones other services use.
const lowest = 10000

// attempts bounds the random draws before Pick falls back to the kernel.
const attempts = 200

// ephemeralRangeFile holds the kernel's ephemeral range on Linux.
var ephemeralRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// Pick returns a TCP port of host that was free a moment ago, below the
// kernel's ephemeral range when there is room there.
func Pick(host string) (int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	if first := ephemeralStart(); first > lowest {
		for range attempts {
			port := lowest + rand.IntN(first-lowest)
			if !handedOut.ports[port] && free(host, port) {
				handedOut.ports[port] = true
				return port, nil
			}
		}
	}
	for range attempts {
		port, err := fromKernel(host)
		if err != nil {
			return 0, err
		}
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("finding a free port on %s: every port offered was handed out before", host)
}

// ephemeralStart is the first port of the kernel's ephemeral range, or 0
// when it is unknown (not Linux).
func ephemeralStart() int {
	data, err := os.ReadFile(ephemeralRangeFile)
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return 0
	}
	first, err := strconv.Atoi(fields[0])
	if err != nil {
		return 0
	}
	return first
}

func free(host string, port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

func fromKernel(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("finding a free port on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
