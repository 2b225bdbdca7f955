package tunnel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/tunnel/wire"
)

// message is a remotedialer message: id, connection id, type, body.
func message(typ int64, body []byte) []byte {
	var b []byte
	for _, v := range []int64{7, 1, typ} {
		b = binary.AppendVarint(b, v)
	}
	return append(b, body...)
}

// frame is one masked client frame.
func frame(fin bool, opcode byte, payload []byte) []byte {
	h := opcode
	if fin {
		h |= 0x80
	}
	out := []byte{h}
	switch n := len(payload); {
	case n < 126:
		out = append(out, 0x80|byte(n))
	case n < 1<<16:
		out = append(out, 0x80|126)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
	default:
		out = append(out, 0x80|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	mask := []byte{0x12, 0x34, 0x56, 0x78}
	out = append(out, mask...)
	for i, c := range payload {
		out = append(out, c^mask[i%4])
	}
	return out
}

// feed gives the stream to a frameReader in pieces of size step.
func feed(stream []byte, step int) error {
	var f frameReader
	for len(stream) > 0 {
		n := min(step, len(stream))
		if err := f.consume(stream[:n]); err != nil {
			return err
		}
		stream = stream[n:]
	}
	return nil
}

func TestTheGuardLetsAgentsMessagesThrough(t *testing.T) {
	data := message(1, bytes.Repeat([]byte("x"), 40000))
	var stream []byte
	stream = append(stream, frame(true, 2, message(6, nil))...)           // Pause
	stream = append(stream, frame(false, 2, data[:1])...)                 // a Data message cut after one byte,
	stream = append(stream, frame(true, 9, []byte("ping"))...)            // a ping between its frames,
	stream = append(stream, frame(false, 0, data[1:2])...)                // more pieces,
	stream = append(stream, frame(true, 0, data[2:])...)                  // and its end
	stream = append(stream, frame(true, 2, message(3, []byte("EOF")))...) // Error
	stream = append(stream, frame(true, 8, []byte{0x03, 0xe8})...)        // close
	for _, step := range []int{1, 3, 4096, len(stream)} {
		assert.NoError(t, feed(stream, step), "read %d bytes at a time", step)
	}
}

func TestTheGuardStopsWhatAgentsDoNotSend(t *testing.T) {
	big := message(1, bytes.Repeat([]byte("x"), maxAgentMessage))
	for name, c := range map[string]struct {
		stream []byte
		want   string
	}{
		"a message over the limit in one frame": {frame(true, 2, big), "a message over"},
		"a message over the limit in many frames": {append(append(frame(false, 2, big[:maxAgentMessage/2]), frame(false, 0, big[maxAgentMessage/2:maxAgentMessage])...),
			frame(true, 0, big[maxAgentMessage:])...), "a message over"},
		"SyncConnections":              {frame(true, 2, message(8, bytes.Repeat([]byte{2}, 100))), "type 8"},
		"AddClient":                    {frame(true, 2, message(4, []byte("a/1"))), "type 4"},
		"RemoveClient":                 {frame(true, 2, message(5, []byte("a/1"))), "type 5"},
		"Connect":                      {frame(true, 2, message(2, []byte("tcp/x:1"))), "type 2"},
		"a message without its header": {frame(true, 2, []byte{0x80, 0x80}), "without remotedialer's header"},
		"a continuation out of place":  {frame(true, 0, message(1, nil)), "continuation"},
		"a large control frame":        {frame(true, 9, bytes.Repeat([]byte("p"), 126)), "control frame"},
	} {
		for _, step := range []int{1, 4096} {
			err := feed(c.stream, step)
			require.Error(t, err, "%s, %d bytes at a time", name, step)
			assert.Contains(t, err.Error(), c.want, name)
		}
	}
	// A header that announces 400 MiB is refused before any of it comes.
	header := []byte{0x82, 0x80 | 127}
	header = binary.BigEndian.AppendUint64(header, 400<<20)
	header = append(header, 1, 2, 3, 4)
	err := feed(header, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a message over")
}

// A client that sends a tunnel what no agent sends loses the tunnel, and
// the apiserver keeps what it had.
func TestTheHubClosesATunnelThatBreaksTheProtocol(t *testing.T) {
	hub := NewHub()
	fed := federation(t, hub, "c1")
	dialer := websocket.Dialer{TLSClientConfig: fed.Client().Transport.(*http.Transport).TLSClientConfig, HandshakeTimeout: 5 * time.Second}
	url := "wss" + strings.TrimPrefix(fed.URL, "https") + wire.TunnelPath("c1")
	for name, msg := range map[string][]byte{
		"SyncConnections": message(8, bytes.Repeat([]byte{2}, 64)),
		"a 2 MiB message": message(1, bytes.Repeat([]byte("x"), 2<<20)),
	} {
		ws, _, err := dialer.Dial(url, nil)
		require.NoError(t, err, name)
		waitConnected(t, hub, "c1", true)
		_ = ws.WriteMessage(websocket.BinaryMessage, msg)
		_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		// remotedialer may answer the start of the message (an unknown
		// connection's data) before the guard sees its size.
		for err == nil {
			_, _, err = ws.ReadMessage()
		}
		var netErr net.Error
		if errors.As(err, &netErr) {
			assert.False(t, netErr.Timeout(), "%s: closed, not left open: %v", name, err)
		}
		waitConnected(t, hub, "c1", false)
		_ = ws.Close()
	}
}
