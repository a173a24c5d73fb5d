package remoting

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// A broker-initiated request is answered by the client's handler with the request's
// opaque and serialization, even when the opaque collides with one the client has
// pending on the same connection.
func TestServerInitiatedRequest(t *testing.T) {
	defer goleak.VerifyNone(t)
	heldCh := make(chan held, 1)
	s := startServer(t, WithServerHandler(codeHold, holdHandler(heldCh)))
	defer s.Close()
	type handled struct {
		addr string
		req  *Command
	}
	handledCh := make(chan handled, 2)
	c := newClient(t, WithHandler(codeInfo, func(ctx context.Context, addr string, req *Command) *Command {
		handledCh <- handled{addr, req}
		resp := NewResponse(req, 0, "running")
		resp.Body = []byte(`{"properties":{}}`)
		return resp
	}))
	defer c.Close()

	// The client's request 1 is held by the server...
	clientDone := make(chan error, 1)
	var clientResp *Command
	require.NoError(t, c.InvokeAsync(s.Addr(), NewRequest(codeHold, nil, nil), time.Minute, func(resp *Command, err error) {
		clientResp = resp
		clientDone <- err
	}))
	h := <-heldCh
	require.Equal(t, int32(1), h.req.Opaque)

	// ...while the server sends its own requests, the first with the same opaque 1.
	for i, st := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
		req := NewRequest(codeInfo, Fields{{"consumerGroup", "g"}}, nil)
		req.Serialize = st
		resp, err := h.sc.Invoke(context.Background(), req)
		require.NoError(t, err)
		require.Equal(t, int32(i+1), req.Opaque, "opaques count up per Server")
		require.Equal(t, req.Opaque, resp.Opaque)
		require.True(t, resp.IsResponse())
		require.Equal(t, st, resp.Serialize)
		require.Equal(t, "running", resp.Remark)
		require.Equal(t, `{"properties":{}}`, string(resp.Body))
		got := <-handledCh
		require.Equal(t, s.Addr(), got.addr)
		require.Equal(t, "g", got.req.ExtFields.Value("consumerGroup"))
	}

	// The held request is still pending and gets its own answer.
	require.NoError(t, h.sc.Respond(NewResponse(h.req, 0, "late")))
	require.NoError(t, <-clientDone)
	require.Equal(t, "late", clientResp.Remark)
}

// The server never answers a oneway request, even when its handler returns a response;
// an unregistered code is answered REQUEST_CODE_NOT_SUPPORTED unless oneway. Server
// handlers run in order on the read loop, so the first frame back must answer the last
// request.
func TestServerOnewayAndUnknownCode(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServer(t)
	defer s.Close()
	conn, err := net.Dial("tcp", s.Addr())
	require.NoError(t, err)
	defer conn.Close()

	oneway := NewRequest(codeEcho, nil, nil)
	oneway.Opaque, oneway.Flag = 1, FlagOneway
	writeFrame(t, conn, oneway)
	unknownOneway := NewRequest(99, nil, nil)
	unknownOneway.Opaque, unknownOneway.Flag = 2, FlagOneway
	writeFrame(t, conn, unknownOneway)
	unknown := NewRequest(99, nil, nil)
	unknown.Opaque, unknown.Serialize = 3, SerializeRocketMQ
	writeFrame(t, conn, unknown)

	resp, err := NewFrameReader(conn, 0).Read()
	require.NoError(t, err)
	require.Equal(t, int32(3), resp.Opaque)
	require.Equal(t, codeRequestCodeNotSupported, resp.Code)
	require.Equal(t, " request type 99 not supported", resp.Remark)
	require.True(t, resp.IsResponse())
	require.Equal(t, SerializeRocketMQ, resp.Serialize)
}

// The client never answers a oneway request and answers an unknown code with 3.
func TestClientOnewayAndUnknownCode(t *testing.T) {
	defer goleak.VerifyNone(t)
	peer := newRawPeer(t)
	defer peer.close()
	notified := make(chan *Command, 1)
	c := newClient(t, WithHandler(codeNotify, func(ctx context.Context, addr string, req *Command) *Command {
		notified <- req
		return NewResponse(req, 0, "must not be sent")
	}))
	defer c.Close()

	require.NoError(t, c.InvokeOneway(context.Background(), peer.addr(), NewRequest(35, nil, nil)))
	conn := peer.accept(t)
	defer conn.Close()
	fr := NewFrameReader(conn, 0)
	_, err := fr.Read()
	require.NoError(t, err)

	notify := NewRequest(codeNotify, Fields{{"consumerGroup", "g"}}, nil)
	notify.Opaque, notify.Flag = 2_304_136, FlagOneway
	writeFrame(t, conn, notify)
	require.Equal(t, "g", (<-notified).ExtFields.Value("consumerGroup"))
	unknownOneway := NewRequest(98, nil, nil)
	unknownOneway.Opaque, unknownOneway.Flag = 2_304_137, FlagOneway
	writeFrame(t, conn, unknownOneway)
	unknown := NewRequest(99, nil, nil)
	unknown.Opaque = 2_304_138
	writeFrame(t, conn, unknown)

	resp, err := fr.Read()
	require.NoError(t, err)
	require.Equal(t, int32(2_304_138), resp.Opaque)
	require.Equal(t, codeRequestCodeNotSupported, resp.Code)
	require.Equal(t, " request type 99 not supported", resp.Remark)

	// Nothing else was sent before the client closed.
	require.NoError(t, c.Close())
	_, err = fr.Read()
	require.ErrorIs(t, err, io.EOF)
}

// Oversized and garbage frames from the peer close the connection, fail its calls with the
// address, and are reported to OnBadFrame.
func TestClientBadFrames(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"oversized", rawFrame(DefaultMaxFrameSize, 0, 2, []byte("{}")), "exceeds the maximum frame size"},
		{"negative", rawFrame(-1, 0, 0, nil), "frame length -1 is less than 4"},
		{"garbage", []byte("HTTP/1.1 400 Bad Request\r\n\r\n"), "exceeds the maximum frame size"},
		{"bad header", rawFrame(10, 0, 6, []byte(`{"x":}`)), "JSON header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			peer := newRawPeer(t)
			defer peer.close()
			badFrames := make(chan error, 1)
			c := newClient(t, WithConnHooks(ConnHooks{OnBadFrame: func(addr string, err error) {
				require.Equal(t, peer.addr(), addr)
				badFrames <- err
			}}))
			defer c.Close()

			done := make(chan error, 1)
			require.NoError(t, c.InvokeAsync(peer.addr(), NewRequest(codeEcho, nil, nil), time.Minute, func(_ *Command, err error) { done <- err }))
			conn := peer.accept(t)
			defer conn.Close()
			_, err := conn.Write(tt.data)
			require.NoError(t, err)

			err = <-done
			var fe *FrameError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, peer.addr(), fe.Addr)
			require.ErrorContains(t, err, tt.want)
			require.ErrorContains(t, err, "bad frame from "+peer.addr())
			require.ErrorAs(t, <-badFrames, &fe)
		})
	}
}

func TestServerBadFrames(t *testing.T) {
	defer goleak.VerifyNone(t)
	badFrames := make(chan error, 1)
	closed := make(chan error, 1)
	s := startServer(t, WithServerMaxFrameSize(4096), WithServerHooks(ServerHooks{
		OnBadFrame:   func(sc *ServerConn, err error) { badFrames <- err },
		OnConnClosed: func(sc *ServerConn, err error) { closed <- err },
	}))
	defer s.Close()
	conn, err := net.Dial("tcp", s.Addr())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write(rawFrame(5000, 0, 2, []byte("{}")))
	require.NoError(t, err)
	_, err = NewFrameReader(conn, 0).Read()
	require.ErrorIs(t, err, io.EOF, "the server closed the connection")
	err = <-badFrames
	require.ErrorContains(t, err, "frame of 5004 bytes exceeds the maximum frame size 4096")
	require.ErrorContains(t, err, conn.LocalAddr().String())
	require.ErrorContains(t, <-closed, "exceeds the maximum frame size")
}

// A peer that stops reading: calls with a ctx still return, and the connection fails
// after the write timeout with every pending call.
func TestPeerStopsReading(t *testing.T) {
	defer goleak.VerifyNone(t)
	peer := newRawPeer(t)
	defer peer.close()
	closed := make(chan error, 4) // a redial after the failure adds a second connection
	c := newClient(t, WithWriteTimeout(200*time.Millisecond), WithConnHooks(ConnHooks{
		OnConnClosed: func(addr string, err error) { closed <- err },
	}))
	defer c.Close()

	require.NoError(t, c.InvokeOneway(context.Background(), peer.addr(), NewRequest(1, nil, nil)))
	conn := peer.accept(t) // never read
	defer conn.Close()

	body := make([]byte, 4<<20)
	const n = 12 // 48 MiB: more than loopback socket buffers hold
	errs := make(chan error, n)
	for range n {
		require.NoError(t, c.InvokeAsync(peer.addr(), NewRequest(codeEcho, nil, body), time.Hour, func(_ *Command, err error) { errs <- err }))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Invoke(ctx, peer.addr(), NewRequest(codeEcho, nil, nil))
	require.Error(t, err)
	if !errors.Is(err, context.DeadlineExceeded) {
		// The connection may already have failed.
		var connErr *ConnError
		require.ErrorAs(t, err, &connErr)
	}

	// The connection fails by its write deadline, or first by the stall rule (the 50 ms
	// call timed out with nothing received on the connection): either way at once, and
	// with every pending call.
	cause := <-closed
	var ne net.Error
	require.True(t, errors.Is(cause, ErrStalled) || (errors.As(cause, &ne) && ne.Timeout()),
		"closed for the write deadline or as stalled: %v", cause)
	for range n {
		err := <-errs
		var connErr *ConnError
		require.ErrorAs(t, err, &connErr)
		require.Equal(t, peer.addr(), connErr.Addr)
	}
}

func TestServerCloseFailsServerCalls(t *testing.T) {
	defer goleak.VerifyNone(t)
	opened := make(chan *ServerConn, 1)
	s := startServer(t, WithServerHooks(ServerHooks{OnConnOpened: func(sc *ServerConn) { opened <- sc }}))
	answer := make(chan struct{})
	c := newClient(t, WithHandler(codeInfo, func(ctx context.Context, addr string, req *Command) *Command {
		select {
		case <-answer:
		case <-ctx.Done():
		}
		return nil
	}))
	defer c.Close()
	_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
	require.NoError(t, err)
	sc := <-opened
	require.NotEmpty(t, sc.RemoteAddr())
	require.Len(t, s.Conns(), 1)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err = sc.Invoke(ctx, NewRequest(codeInfo, nil, nil))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, sc.RemoteAddr())

	done := make(chan error, 1)
	go func() {
		_, err := sc.Invoke(context.Background(), NewRequest(codeInfo, nil, nil))
		done <- err
	}()
	require.NoError(t, s.Close())
	require.ErrorIs(t, <-done, ErrClosed)
	<-sc.Done()
	require.ErrorIs(t, sc.Err(), ErrClosed)
	require.ErrorIs(t, sc.Respond(NewResponse(NewRequest(1, nil, nil), 0, "")), ErrClosed)
	require.ErrorIs(t, sc.InvokeOneway(NewRequest(codeNotify, nil, nil)), ErrClosed)
	require.ErrorIs(t, s.Listen("127.0.0.1:0"), ErrClosed)
	close(answer)
}

func TestServerServeAndHandle(t *testing.T) {
	defer goleak.VerifyNone(t)
	s, err := NewServer()
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	addr := ln.Addr().String()

	c := newClient(t)
	defer c.Close()
	resp, err := c.Invoke(context.Background(), addr, NewRequest(7, nil, nil))
	require.NoError(t, err)
	require.Equal(t, codeRequestCodeNotSupported, resp.Code)

	s.Handle(7, func(sc *ServerConn, req *Command) *Command { return NewResponse(req, 0, "seven") })
	resp, err = c.Invoke(context.Background(), addr, NewRequest(7, nil, nil))
	require.NoError(t, err)
	require.Equal(t, "seven", resp.Remark)
	require.Equal(t, addr, s.Addr())

	s.Handle(7, nil)
	resp, err = c.Invoke(context.Background(), addr, NewRequest(7, nil, nil))
	require.NoError(t, err)
	require.Equal(t, codeRequestCodeNotSupported, resp.Code)

	require.NoError(t, s.Close())
	require.ErrorIs(t, <-served, ErrClosed)
}

// A response that cannot be encoded is replaced by SYSTEM_ERROR, so the peer is not left
// waiting.
func TestUnencodableResponse(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServer(t, WithServerHandler(8, func(sc *ServerConn, req *Command) *Command {
		return NewResponse(req, 70000, "") // does not fit a ROCKETMQ header
	}))
	defer s.Close()
	c := newClient(t, WithSerialization(SerializeRocketMQ))
	defer c.Close()
	resp, err := c.Invoke(context.Background(), s.Addr(), NewRequest(8, nil, nil))
	require.NoError(t, err)
	require.Equal(t, codeSystemError, resp.Code)
	require.Contains(t, resp.Remark, "cannot send response code 70000")
}

func TestServerOptionErrors(t *testing.T) {
	h := func(*ServerConn, *Command) *Command { return nil }
	tests := []struct {
		name string
		opts []ServerOption
		want string
	}{
		{"max frame", []ServerOption{WithServerMaxFrameSize(0)}, "WithServerMaxFrameSize(0): must be between"},
		{"write timeout", []ServerOption{WithServerWriteTimeout(0)}, "WithServerWriteTimeout(0s): must be positive"},
		{"nil handler", []ServerOption{WithServerHandler(1, nil)}, "WithServerHandler(1, nil)"},
		{"duplicate handler", []ServerOption{WithServerHandler(1, h), WithServerHandler(1, h)}, "WithServerHandler(1): a handler for code 1 is already registered"},
		{"TLS without certificate", []ServerOption{WithServerTLS(newTLSConfigNoCert())}, "WithServerTLS: the config has no certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewServer(tt.opts...)
			require.Nil(t, s)
			require.ErrorContains(t, err, "remoting: "+tt.want)
		})
	}
}

func TestErrorMessages(t *testing.T) {
	connErr := &ConnError{Addr: "10.0.0.1:10911", Err: io.EOF}
	require.Equal(t, "remoting: connection to 10.0.0.1:10911: EOF", connErr.Error())
	callErr := &CallError{Addr: "10.0.0.1:10911", Code: 11, Opaque: 5, Err: connErr}
	require.Equal(t, "remoting: request code 11 (opaque 5) to 10.0.0.1:10911: connection: EOF", callErr.Error())
	require.ErrorIs(t, callErr, io.EOF)
	callErr = &CallError{Addr: "a:1", Code: 11, Opaque: 5, Err: ErrClosed}
	require.Equal(t, "remoting: request code 11 (opaque 5) to a:1: closed", callErr.Error())
	fe := &FrameError{Addr: "a:1", Err: fmt.Errorf("frame length -1 is less than 4")}
	require.Equal(t, "remoting: bad frame from a:1: frame length -1 is less than 4", fe.Error())
	te := &timeoutError{after: time.Second}
	require.ErrorIs(t, te, ErrTimeout)
	require.ErrorIs(t, te, context.DeadlineExceeded)
}

// A peer cannot make the client run more than maxHandlerCalls handler calls at once:
// beyond, its requests are answered SYSTEM_BUSY and nothing is started.
func TestClientBoundsHandlerCalls(t *testing.T) {
	defer goleak.VerifyNone(t)
	heldCh := make(chan held, 1)
	s := startServer(t, WithServerHandler(codeHold, holdHandler(heldCh)))
	defer s.Close()
	release := make(chan struct{})
	var running atomic.Int32
	notified := make(chan struct{}, 1)
	c := newClient(t, WithHandler(codeInfo, func(ctx context.Context, _ string, req *Command) *Command {
		running.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return NewResponse(req, 0, "done")
	}), WithHandler(codeNotify, func(context.Context, string, *Command) *Command {
		notified <- struct{}{}
		return nil
	}))
	defer c.Close()
	require.NoError(t, c.InvokeAsync(s.Addr(), NewRequest(codeHold, nil, nil), time.Minute, func(*Command, error) {}))
	h := <-heldCh

	answers := make(chan *Command, maxHandlerCalls)
	for range maxHandlerCalls {
		go func() {
			resp, err := h.sc.Invoke(context.Background(), NewRequest(codeInfo, nil, nil))
			if err == nil {
				answers <- resp
			} else {
				answers <- nil
			}
		}()
	}
	require.Eventually(t, func() bool { return running.Load() == maxHandlerCalls }, 5*time.Second, time.Millisecond)
	resp, err := h.sc.Invoke(context.Background(), NewRequest(codeInfo, nil, nil))
	require.NoError(t, err)
	require.Equal(t, codeSystemBusy, resp.Code)
	require.Contains(t, resp.Remark, "system busy")
	require.Equal(t, int32(maxHandlerCalls), running.Load(), "nothing started beyond the bound")
	// A notification (oneway) has slots of its own: it still runs.
	require.NoError(t, h.sc.InvokeOneway(NewRequest(codeNotify, nil, nil)))
	select {
	case <-notified:
	case <-time.After(5 * time.Second):
		t.Fatal("a oneway notification was crowded out by running handler calls")
	}

	close(release)
	for range maxHandlerCalls {
		resp := <-answers
		require.NotNil(t, resp)
		require.Equal(t, "done", resp.Remark)
	}
	require.NoError(t, h.sc.Respond(NewResponse(h.req, 0, "")))
}
