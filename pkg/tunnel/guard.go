package tunnel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
)

// maxAgentMessage bounds one websocket message from an agent. remotedialer
// reads a whole message into memory and sets no limit of its own; an
// agent's data messages are the chunks it copies from its member (32 KiB).
const maxAgentMessage = 1 << 20

// What an agent may send: data of the federation's connections, their
// errors, and flow control. remotedialer's other messages are for peers
// and grow state that lives as long as the tunnel (AddClient,
// SyncConnections), or ask the apiserver to dial (Connect, which it
// refuses anyway).
var agentMessageTypes = map[int64]bool{
	1: true, // Data
	3: true, // Error
	6: true, // Pause
	7: true, // Resume
}

// errAgentFrames ends a tunnel whose agent sent what no agent sends.
var errAgentFrames = errors.New("the agent broke the tunnel's protocol")

// guardedConn is the apiserver's end of a tunnel's connection: it reads
// the websocket frames the agent sends as they pass, and fails the read
// that brings a message larger than maxAgentMessage or of a type agents do
// not send, before remotedialer buffers it.
type guardedConn struct {
	net.Conn
	onAbuse func(error)
	frames  frameReader
}

func (c *guardedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		if ferr := c.frames.consume(p[:n]); ferr != nil {
			c.onAbuse(ferr)
			return 0, fmt.Errorf("%w: %v", errAgentFrames, ferr)
		}
	}
	return n, err
}

// frameReader follows the websocket frames of a byte stream (RFC 6455
// section 5.2), client to server, so masked.
type frameReader struct {
	state      int
	header     [14]byte
	headerLen  int // bytes of the header read so far
	headerNeed int // bytes the header has, once known
	mask       [4]byte
	payload    uint64 // bytes of the current frame's payload left
	offset     uint64 // payload bytes of the current frame read
	control    bool
	// message is the size of the data message so far; inMessage says a
	// data message has begun and not ended.
	message   uint64
	inMessage bool
	fin       bool
	// varints are the first bytes of the message, unmasked, until its
	// third varint (remotedialer's message type) is read.
	varints []byte
	typed   bool
}

const (
	stateHeader = iota
	statePayload
)

func (f *frameReader) consume(b []byte) error {
	for len(b) > 0 {
		switch f.state {
		case stateHeader:
			f.header[f.headerLen] = b[0]
			f.headerLen++
			b = b[1:]
			if f.headerLen == 2 {
				f.headerNeed = 2
				switch f.header[1] & 0x7f {
				case 126:
					f.headerNeed += 2
				case 127:
					f.headerNeed += 8
				}
				if f.header[1]&0x80 != 0 {
					f.headerNeed += 4
				}
			}
			if f.headerLen >= 2 && f.headerLen == f.headerNeed {
				if err := f.startFrame(); err != nil {
					return err
				}
			}
		case statePayload:
			n := min(uint64(len(b)), f.payload)
			if !f.control && !f.typed {
				if err := f.readType(b[:n]); err != nil {
					return err
				}
			}
			f.payload -= n
			f.offset += n
			b = b[n:]
			if f.payload == 0 {
				if err := f.endFrame(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// startFrame reads a frame's header and checks the message it belongs to.
func (f *frameReader) startFrame() error {
	h := f.header[:f.headerNeed]
	f.fin = h[0]&0x80 != 0
	opcode := h[0] & 0x0f
	length := uint64(h[1] & 0x7f)
	rest := h[2:]
	switch length {
	case 126:
		length = uint64(binary.BigEndian.Uint16(rest))
		rest = rest[2:]
	case 127:
		length = binary.BigEndian.Uint64(rest)
		rest = rest[8:]
	}
	if h[1]&0x80 != 0 {
		copy(f.mask[:], rest)
	} else {
		f.mask = [4]byte{}
	}
	f.control = opcode >= 8
	switch {
	case f.control:
		if length > 125 {
			return fmt.Errorf("a control frame of %d bytes", length)
		}
	case opcode == 0:
		if !f.inMessage {
			return errors.New("a continuation frame outside a message")
		}
	default:
		if f.inMessage {
			return errors.New("a new message before the last one ended")
		}
		f.inMessage, f.message, f.varints, f.typed = true, 0, f.varints[:0], false
	}
	if !f.control {
		if length > maxAgentMessage-f.message {
			return fmt.Errorf("a message over %d bytes", maxAgentMessage)
		}
		f.message += length
	}
	f.payload, f.offset, f.state = length, 0, statePayload
	if length == 0 {
		return f.endFrame()
	}
	return nil
}

// readType unmasks the first bytes of a message until its third varint,
// remotedialer's message type, is complete, and checks it: before the
// bytes reach remotedialer.
func (f *frameReader) readType(b []byte) error {
	for i, c := range b {
		c ^= f.mask[(f.offset+uint64(i))%4]
		f.varints = append(f.varints, c)
		if c&0x80 == 0 && countVarints(f.varints) == 3 {
			f.typed = true
			return f.checkType()
		}
		if len(f.varints) >= 3*binary.MaxVarintLen64 {
			return errors.New("a message without remotedialer's header")
		}
	}
	return nil
}

func (f *frameReader) endFrame() error {
	f.state, f.headerLen, f.headerNeed = stateHeader, 0, 0
	if f.control || !f.fin {
		return nil
	}
	f.inMessage = false
	if !f.typed {
		return errors.New("a message without remotedialer's header")
	}
	return nil
}

// checkType fails a message whose type agents do not send.
func (f *frameReader) checkType() error {
	b := f.varints
	for range 2 {
		_, n := binary.Varint(b)
		if n <= 0 {
			return errors.New("a message without remotedialer's header")
		}
		b = b[n:]
	}
	t, n := binary.Varint(b)
	if n <= 0 {
		return errors.New("a message without remotedialer's header")
	}
	if !agentMessageTypes[t] {
		return fmt.Errorf("a message of type %d, which agents do not send", t)
	}
	return nil
}

// countVarints counts the complete varints in b.
func countVarints(b []byte) int {
	n := 0
	for _, c := range b {
		if c&0x80 == 0 {
			n++
		}
	}
	return n
}
