package app

import (
	"errors"
	"fmt"
	"net"
	"sync"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/rest"
)

// ownLoopback gives a server that shares its port with other processes
// (--permit-port-sharing, as an HA plane's apiservers do) a listener of its
// own for its loopback client, on a port of 127.0.0.1 the kernel picks. A
// connection to the shared port reaches whichever process the kernel
// chooses, and the loopback client presents this process's own in-memory
// certificate (by SNI) and bearer token, which the others do not know: the
// post-start hooks and in-server controllers would fail about half their
// calls, and a failed post-start hook ends the server. The shared listener
// stays the server's address (default/kubernetes' port, its log).
func ownLoopback(serving *genericapiserver.SecureServingInfo, loopback *rest.Config) error {
	if serving == nil || serving.Listener == nil || loopback == nil {
		return nil
	}
	private, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening for the loopback client on 127.0.0.1: %w", err)
	}
	serving.Listener = joinListeners(serving.Listener, private)
	loopback.Host = "https://" + private.Addr().String()
	return nil
}

// joinedListener accepts the connections of several listeners; its address
// is the first one's.
type joinedListener struct {
	listeners []net.Listener
	accepted  chan acceptResult
	closed    chan struct{}
	closeOnce sync.Once
}

type acceptResult struct {
	conn net.Conn
	err  error
}

func joinListeners(listeners ...net.Listener) *joinedListener {
	j := &joinedListener{listeners: listeners, accepted: make(chan acceptResult), closed: make(chan struct{})}
	for _, l := range listeners {
		go j.acceptFrom(l)
	}
	return j
}

// acceptFrom hands l's connections to Accept until l is closed. Other
// errors (out of file descriptors) go to Accept's caller too, which
// http.Server retries.
func (j *joinedListener) acceptFrom(l net.Listener) {
	for {
		conn, err := l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		select {
		case j.accepted <- acceptResult{conn, err}:
		case <-j.closed:
			if conn != nil {
				conn.Close()
			}
			return
		}
	}
}

// Accept returns the next connection of any of the listeners.
func (j *joinedListener) Accept() (net.Conn, error) {
	select {
	case a := <-j.accepted:
		return a.conn, a.err
	case <-j.closed:
		return nil, net.ErrClosed
	}
}

// Close closes every listener.
func (j *joinedListener) Close() error {
	var errs []error
	j.closeOnce.Do(func() {
		close(j.closed)
		for _, l := range j.listeners {
			errs = append(errs, l.Close())
		}
	})
	return errors.Join(errs...)
}

// Addr is the first listener's address.
func (j *joinedListener) Addr() net.Addr { return j.listeners[0].Addr() }
