package remoting

import (
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// Request codes the tests use.
const (
	codeEcho   int32 = 100 // the server answers with the request's fields and body
	codeHold   int32 = 101 // the server holds the request and answers nothing
	codeNotify int32 = 40  // broker-initiated, oneway
	codeInfo   int32 = 307 // broker-initiated, answered
)

func echoHandler(_ *ServerConn, req *Command) *Command {
	resp := NewResponse(req, 0, "echo")
	resp.ExtFields = req.ExtFields
	resp.Body = req.Body
	return resp
}

// held is a request a codeHold handler kept.
type held struct {
	sc  *ServerConn
	req *Command
}

// holdHandler returns a handler that sends every request to ch and answers nothing.
func holdHandler(ch chan<- held) ServerHandler {
	return func(sc *ServerConn, req *Command) *Command {
		ch <- held{sc, req}
		return nil
	}
}

// startServer starts a Server on a loopback port. The caller defers Close.
func startServer(t *testing.T, opts ...ServerOption) *Server {
	t.Helper()
	s, err := NewServer(append([]ServerOption{WithServerHandler(codeEcho, echoHandler)}, opts...)...)
	require.NoError(t, err)
	require.NoError(t, s.Listen("127.0.0.1:0"))
	require.NotEmpty(t, s.Addr())
	return s
}

func newClient(t *testing.T, opts ...ClientOption) *Client {
	t.Helper()
	c, err := NewClient(opts...)
	require.NoError(t, err)
	return c
}

// rawPeer is a TCP listener whose accepted connections the test drives by hand.
type rawPeer struct {
	ln    net.Listener
	conns chan net.Conn
	wg    sync.WaitGroup
}

func newRawPeer(t *testing.T) *rawPeer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &rawPeer{ln: ln, conns: make(chan net.Conn, 16)}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.conns <- c
		}
	}()
	return p
}

func (p *rawPeer) addr() string { return p.ln.Addr().String() }

func (p *rawPeer) accept(t *testing.T) net.Conn {
	t.Helper()
	return <-p.conns
}

// close stops accepting and closes every accepted connection not taken by accept.
func (p *rawPeer) close() {
	_ = p.ln.Close()
	p.wg.Wait()
	close(p.conns)
	for c := range p.conns {
		_ = c.Close()
	}
}

// writeFrame writes cmd as a frame to w.
func writeFrame(t *testing.T, w net.Conn, cmd *Command) {
	t.Helper()
	frame, err := EncodeFrame(nil, cmd)
	require.NoError(t, err)
	_, err = w.Write(frame)
	require.NoError(t, err)
}
