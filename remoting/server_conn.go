package remoting

import (
	"context"
	"fmt"
)

// ServerConn is one connection accepted by a Server. Its methods are safe for concurrent
// use; compare ServerConns by pointer to track a peer.
type ServerConn struct {
	s      *Server
	c      *conn
	remote string
}

// RemoteAddr returns the peer's address, "host:port".
func (sc *ServerConn) RemoteAddr() string { return sc.remote }

// Done is closed when the connection has closed.
func (sc *ServerConn) Done() <-chan struct{} { return sc.c.done }

// Err returns why the connection closed, or nil while it is open.
func (sc *ServerConn) Err() error { return sc.c.closeErr() }

// Close closes the connection; its pending calls fail with an error wrapping ErrClosed.
func (sc *ServerConn) Close() { sc.c.close(ErrClosed) }

// Respond sends resp, a response built for a request of this connection (NewResponse
// copies the request's opaque and serialization). It sets the response flag. It may be
// called from any goroutine, at any time after the request arrived, which is how a long
// poll is answered; it never blocks on the socket. It fails if the connection closed or
// resp cannot be encoded. Never respond to a oneway request.
func (sc *ServerConn) Respond(resp *Command) error {
	resp.Flag = (resp.Flag | FlagResponse) &^ FlagOneway
	frame, err := appendFrame(sc.s.pool.get(), resp)
	if err == nil {
		err = sc.c.send(frame, nil)
	}
	if err != nil {
		sc.s.pool.put(frame)
		return &CallError{Addr: sc.remote, Code: resp.Code, Opaque: resp.Opaque, Err: fmt.Errorf("respond: %w", err)}
	}
	return nil
}

// Invoke sends req to the peer (a broker-initiated request, e.g.
// GET_CONSUMER_RUNNING_INFO) in req.Serialize, with an opaque from the Server's counter,
// and waits for the response or the end of ctx (then a *CallError wrapping ctx.Err()).
// It must not be called from a handler, whose read loop would have to read the answer.
func (sc *ServerConn) Invoke(ctx context.Context, req *Command) (*Command, error) {
	if err := ctx.Err(); err != nil {
		return nil, &CallError{Addr: sc.remote, Code: req.Code, Err: err}
	}
	frame, err := sc.prepare(req, 0)
	if err != nil {
		return nil, err
	}
	call := newCall(sc.remote, req, nil)
	call.ch = make(chan callResult, 1)
	if err := sc.c.send(frame, call); err != nil {
		sc.s.pool.put(frame)
		return nil, call.wrap(err)
	}
	select {
	case r := <-call.ch:
		return r.resp, r.err
	case <-ctx.Done():
		if call.done.CompareAndSwap(false, true) {
			sc.c.forget(call)
			return nil, call.wrap(ctx.Err())
		}
		r := <-call.ch
		return r.resp, r.err
	}
}

// InvokeOneway sends req to the peer with the oneway flag (NOTIFY_CONSUMER_IDS_CHANGED,
// RESET_CONSUMER_CLIENT_OFFSET) and returns once it is queued.
func (sc *ServerConn) InvokeOneway(req *Command) error {
	frame, err := sc.prepare(req, FlagOneway)
	if err != nil {
		return err
	}
	if err := sc.c.send(frame, nil); err != nil {
		sc.s.pool.put(frame)
		return &CallError{Addr: sc.remote, Code: req.Code, Opaque: req.Opaque, Err: err}
	}
	return nil
}

func (sc *ServerConn) prepare(req *Command, flag int32) ([]byte, error) {
	req.Opaque = sc.s.opaque.Add(1)
	req.Flag = req.Flag&^(FlagResponse|FlagOneway) | flag
	frame, err := appendFrame(sc.s.pool.get(), req)
	if err != nil {
		sc.s.pool.put(frame)
		return nil, &CallError{Addr: sc.remote, Code: req.Code, Opaque: req.Opaque, Err: err}
	}
	return frame, nil
}

// handleRequest dispatches a request on the read loop.
func (sc *ServerConn) handleRequest(c *conn, req *Command) {
	h := sc.s.handler(req.Code)
	if h == nil {
		if !req.IsOneway() {
			c.respond(req, notSupported(req))
		}
		return
	}
	if resp := h(sc, req); resp != nil && !req.IsOneway() {
		c.respond(req, resp)
	}
}

func (sc *ServerConn) badFrame(_ *conn, err *FrameError) {
	if f := sc.s.cfg.hooks.OnBadFrame; f != nil {
		f(sc, err)
	}
}

func (sc *ServerConn) connClosing(*conn) {
	sc.s.mu.Lock()
	delete(sc.s.conns, sc)
	sc.s.mu.Unlock()
}

func (sc *ServerConn) connClosed(_ *conn, err error) {
	if f := sc.s.cfg.hooks.OnConnClosed; f != nil {
		f(sc, err)
	}
}
