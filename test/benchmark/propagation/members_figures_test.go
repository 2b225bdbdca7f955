package propagation

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemberCountsLeaveRoomForTheMembersJoinedLater(t *testing.T) {
	counts, err := parseMemberCounts("10, 25,50", 10)
	require.NoError(t, err)
	assert.Equal(t, []int{10, 25, 50}, counts)

	_, err = parseMemberCounts("10,65", 10)
	assert.ErrorContains(t, err, `"65" is not a member count from 1 to 60`)
	_, err = parseMemberCounts("0", 0)
	assert.Error(t, err)
	_, err = parseMemberCounts("ten", 0)
	assert.Error(t, err)
}

func TestTheSteadyRateSpreadsTheCopiesOverTheMembers(t *testing.T) {
	assert.Equal(t, 10, steadyObjectsPerSecond(100, 10))
	assert.Equal(t, 4, steadyObjectsPerSecond(100, 25))
	assert.Equal(t, 2, steadyObjectsPerSecond(100, 50))
	assert.Equal(t, 1, steadyObjectsPerSecond(100, 200), "at least one object a second")
}

// A connection counts when it is established, belongs to one of the
// process's sockets and goes to one of the ports.
func TestConnectionsCountEstablishedSocketsOfTheProcessToThePorts(t *testing.T) {
	table := strings.Join([]string{
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
		// 127.0.0.1:40000 → 127.0.0.1:6443 (0x192B), established, ours.
		"   0: 0100007F:9C40 0100007F:192B 01 00000000:00000000 00:00000000 00000000  1000        0 111 1 0 20 4 30 10 -1",
		// The same port, another process's socket.
		"   1: 0100007F:9C41 0100007F:192B 01 00000000:00000000 00:00000000 00000000  1000        0 222 1 0 20 4 30 10 -1",
		// Ours, to the port, but waiting to close (TIME_WAIT is 06).
		"   2: 0100007F:9C42 0100007F:192B 06 00000000:00000000 00:00000000 00000000  1000        0 333 1 0 20 4 30 10 -1",
		// Ours, established, to another port (0x1F90 = 8080).
		"   3: 0100007F:9C43 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 444 1 0 20 4 30 10 -1",
		// Ours, established, to the second port (0x192C = 6444).
		"   4: 0100007F:9C44 0100007F:192C 01 00000000:00000000 00:00000000 00000000  1000        0 555 1 0 20 4 30 10 -1",
		"",
	}, "\n")
	ours := map[string]bool{"111": true, "333": true, "444": true, "555": true}
	n, err := countEstablished(table, ours, map[int]bool{6443: true, 6444: true})
	require.NoError(t, err)
	assert.Equal(t, 2, n)
}

func TestTheMembersTableShowsTargets(t *testing.T) {
	rep := &report{}
	bn := &bench{rep: rep}
	bn.membersBelow(50, "at rest: RSS MiB per member", 1.25, targetMiBPerMember)
	bn.membersBelow(50, "steady create p99 ms", 2500, targetSteadyP99)
	bn.membersAdd(50, "seconds to join", 42)
	var out bytes.Buffer
	rep.printMembers(&out)
	assert.Contains(t, out.String(), "| 50 | at rest: RSS MiB per member | 1.25 | < 5.00 | yes |")
	assert.Contains(t, out.String(), "| 50 | steady create p99 ms | 2500 | < 2000 | **no** |")
	assert.Contains(t, out.String(), "| 50 | seconds to join | 42.0 | — | — |")
}
