package remoting

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Client sends requests to RocketMQ name servers and brokers and serves the requests they
// send back. It dials lazily and keeps one connection per address; concurrent first calls
// to an address share one dial. Opaques come from a counter of this Client.
//
// Goroutines, all owned by the Client and ended by Close: per connection a read loop and
// a write loop; one per dial in progress; one per inbound request handled (at most
// maxHandlerCalls + maxOnewayCalls); the timers of asynchronous calls while their
// callbacks run; the idle sweep's timer while it runs (WithIdleTimeout); and, with
// WithIdleWork, a takeover timer's while it hands a read loop on. A goroutine whose
// idle work outlived its read loop's takeover, or its connection, is the work's owner's.
//
// Invoke, InvokeAsync and InvokeOneway set req.Opaque, req.Flag and req.Serialize and
// run the RPC hooks on req, so a request must not be shared between concurrent calls.
// The request's body is copied into the frame before the call returns.
type Client struct {
	cfg    clientConfig
	opaque atomic.Int32
	pool   framePool
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	conns  map[string]*clientConn
	wg     sync.WaitGroup

	handlerSlots chan struct{} // one per handler call running for a request: at most maxHandlerCalls
	onewaySlots  chan struct{} // the same for oneway requests (notifications), kept apart
	sweep        *time.Timer   // the next idle sweep; under mu
}

// errIdle closes a connection that carried nothing for the idle timeout.
var errIdle = errors.New("idle for the idle timeout")

// idleClosed reports whether err is a send on a connection the idle sweep closed
// between the caller finding it and sending: the call goes on a new connection.
func idleClosed(err error) bool {
	if err == nil {
		return false // before errors.As, whose target would escape on every call
	}
	var ce *ConnError
	return errors.As(err, &ce) && ce.Err == errIdle
}

// maxHandlerCalls bounds the handler calls a Client runs at once for requests its peers
// send; beyond, a request is answered SYSTEM_BUSY, as Java's remoting does when its
// executor is full. Oneway requests (NOTIFY_CONSUMER_IDS_CHANGED) have slots of their
// own, so long admin calls cannot crowd out a notification; beyond them one is dropped.
const (
	maxHandlerCalls = 64
	maxOnewayCalls  = 16
)

// clientConn is one address's connection, or the dial that will make it.
type clientConn struct {
	ready   chan struct{} // closed when the dial ended; c or err is set
	c       *conn
	err     error                // a *ConnError
	waiters []func(*conn, error) // async sends waiting for the dial, run by the dial goroutine
}

// NewClient returns a Client configured by opts; an invalid option fails with an error
// naming it.
func NewClient(opts ...ClientOption) (*Client, error) {
	cfg := defaultClientConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	cl := &Client{cfg: cfg, ctx: ctx, cancel: cancel, conns: make(map[string]*clientConn),
		handlerSlots: make(chan struct{}, maxHandlerCalls), onewaySlots: make(chan struct{}, maxOnewayCalls)}
	cl.armSweep()
	return cl, nil
}

// Invoke sends req to addr and waits for the response, dialing first if needed. When ctx
// ends first it returns a *CallError wrapping ctx.Err() and forgets the call; a response
// arriving later is dropped. Other errors are *CallError values naming the address, code
// and opaque, wrapping a *ConnError when the connection failed or could not be made, or
// ErrClosed. When ctx's deadline passes and no frame at all arrived on the connection
// since req was sent, the peer is taken as stalled: the connection closes, its other
// calls fail with a *ConnError wrapping ErrStalled, and the next call dials again.
func (cl *Client) Invoke(ctx context.Context, addr string, req *Command) (*Command, error) {
	if err := ctx.Err(); err != nil {
		return nil, &CallError{Addr: addr, Code: req.Code, Err: err}
	}
	frame, err := cl.prepare(addr, req, 0)
	if err != nil {
		return nil, err
	}
	call := newCall(addr, req, cl.cfg.rpcHooks)
	call.ch = make(chan callResult, 1)
	start := time.Now()
	c, err := cl.sendWaiting(ctx, addr, frame, call)
	if err != nil {
		cl.pool.put(frame)
		return nil, call.wrap(err)
	}
	select {
	case r := <-call.ch:
		return r.resp, r.err
	case <-ctx.Done():
		if call.done.CompareAndSwap(false, true) {
			c.forget(call)
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				c.timedOut(call, time.Since(start))
			}
			return nil, call.wrap(ctx.Err())
		}
		r := <-call.ch // completed concurrently: its result is on its way
		return r.resp, r.err
	}
}

// InvokeAsync sends req to addr and returns without waiting on the network: when there
// is no connection yet, a goroutine of the Client dials and sends afterwards. If it
// returns an error (the Client is closed, req cannot be encoded, the connection's queue is
// full), callback is never called. Otherwise callback is called exactly once: with the
// response, with a *CallError wrapping a timeout (errors.Is ErrTimeout and
// context.DeadlineExceeded) when none arrived within timeout of this call, or with a
// *CallError wrapping the connection's or dial's *ConnError. A timeout with no frame
// arriving on the connection since req was sent closes the connection, as Invoke's.
//
// The callback runs on the connection's read loop, a timer goroutine, the dial goroutine,
// or the goroutine closing the connection; never on the caller's. It must be quick, must
// not block and must not call Close.
func (cl *Client) InvokeAsync(addr string, req *Command, timeout time.Duration, callback func(resp *Command, err error)) error {
	return cl.InvokeAsyncInto(addr, req, timeout, nil, callback)
}

// A BodySource lends the buffers response bodies are read into, for the calls made with
// InvokeAsyncInto: a caller that knows when it is done with a body can read the next
// one into the same memory instead of having a new allocation for each.
type BodySource interface {
	// Body returns a buffer of length n for the body of n bytes of the response whose
	// header has just been read, or nil to have the body allocated as usual (any other
	// length counts as nil). The buffer is then the response's Body; a response that is
	// not delivered (its call timed out, the connection failed while it was read) leaves
	// it to the garbage collector. Body runs on the connection's read loop, before the
	// body's bytes arrive: it must be quick and must not block. Its sizes are the peer's
	// word: a source should refuse those larger than it means to lend.
	Body(n int) []byte
}

// InvokeAsyncInto is InvokeAsync with the response's body read into a buffer that src
// lends (see BodySource); src nil is InvokeAsync.
func (cl *Client) InvokeAsyncInto(addr string, req *Command, timeout time.Duration, src BodySource, callback func(resp *Command, err error)) error {
	if callback == nil {
		return &CallError{Addr: addr, Code: req.Code, Err: errors.New("nil callback")}
	}
	if timeout <= 0 {
		return &CallError{Addr: addr, Code: req.Code, Err: fmt.Errorf("timeout %v must be positive", timeout)}
	}
	frame, err := cl.prepare(addr, req, 0)
	if err != nil {
		return err
	}
	call := newCall(addr, req, cl.cfg.rpcHooks)
	call.cb = callback
	call.bodies = src
	return cl.sendAsync(addr, frame, call, timeout, true)
}

// sendAsync is InvokeAsync once the frame and call are made. A send that finds the
// connection just closed by the idle sweep goes on a new one (retry).
func (cl *Client) sendAsync(addr string, frame []byte, call *call, timeout time.Duration, retry bool) error {
	cl.mu.Lock()
	if cl.closed {
		cl.mu.Unlock()
		cl.pool.put(frame)
		return call.wrap(ErrClosed)
	}
	e := cl.entry(addr)
	if c := e.c; c != nil {
		cl.mu.Unlock()
		err := c.send(frame, call)
		if retry && idleClosed(err) {
			cl.connClosing(c) // it may not have left the table yet
			return cl.sendAsync(addr, frame, call, timeout, false)
		}
		if err != nil {
			cl.pool.put(frame)
			return call.wrap(err)
		}
		cl.startTimer(call, timeout)
		return nil
	}
	cl.startTimer(call, timeout) // the dial counts against the timeout
	e.waiters = append(e.waiters, func(c *conn, err error) {
		switch {
		case call.done.Load(): // timed out while dialing
			cl.pool.put(frame)
		case err != nil:
			cl.pool.put(frame)
			call.complete(nil, err)
		default:
			if err := c.send(frame, call); err != nil {
				cl.pool.put(frame)
				call.complete(nil, err)
			}
		}
	})
	cl.mu.Unlock()
	return nil
}

// InvokeOneway sends req to addr with the oneway flag and returns once it is queued for
// writing; no response is expected. It waits for a dial, bounded by ctx.
func (cl *Client) InvokeOneway(ctx context.Context, addr string, req *Command) error {
	if err := ctx.Err(); err != nil {
		return &CallError{Addr: addr, Code: req.Code, Err: err}
	}
	frame, err := cl.prepare(addr, req, FlagOneway)
	if err != nil {
		return err
	}
	if _, err := cl.sendWaiting(ctx, addr, frame, nil); err != nil {
		cl.pool.put(frame)
		return &CallError{Addr: addr, Code: req.Code, Opaque: req.Opaque, Err: err}
	}
	return nil
}

// CloseConn closes the connection to addr, if there is one, failing its pending calls
// with a *ConnError wrapping ErrClosed. The next call to addr dials again.
func (cl *Client) CloseConn(addr string) {
	cl.mu.Lock()
	var c *conn
	if e := cl.conns[addr]; e != nil {
		c = e.c
	}
	cl.mu.Unlock()
	if c != nil {
		c.close(ErrClosed)
	}
}

// Close closes every connection, fails every pending call with an error wrapping
// ErrClosed, cancels the contexts of running handlers, and waits for every goroutine the
// Client started. Later calls fail with ErrClosed. It must not be called from a
// callback, hook or handler. Calling it again returns nil at once.
func (cl *Client) Close() error {
	cl.mu.Lock()
	if cl.closed {
		cl.mu.Unlock()
		return nil
	}
	cl.closed = true
	if cl.sweep != nil {
		cl.sweep.Stop()
	}
	var conns []*conn
	for _, e := range cl.conns {
		if e.c != nil {
			conns = append(conns, e.c)
		}
	}
	cl.mu.Unlock()
	cl.cancel() // ends dials in progress; they fail their waiters with ErrClosed
	for _, c := range conns {
		c.close(ErrClosed)
	}
	cl.wg.Wait()
	return nil
}

// armSweep schedules the next idle sweep, unless the Client is closed or keeps idle
// connections.
func (cl *Client) armSweep() {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if !cl.closed && cl.cfg.idleTimeout > 0 {
		cl.sweep = time.AfterFunc(cl.cfg.idleTimeout, cl.sweepIdle)
	}
}

// sweepIdle closes the connections that carried no frame since the previous sweep and
// wait for no answer (Java closes a channel idle for 120 s): connections to brokers
// that left the routes, or to a store host a send-back dialed, do not stay open for
// ever. Long polls keep a consumer's broker connections busy.
func (cl *Client) sweepIdle() {
	if !cl.enter() {
		return
	}
	defer cl.wg.Done()
	var conns []*conn
	cl.mu.Lock()
	for _, e := range cl.conns {
		if e.c != nil {
			conns = append(conns, e.c)
		}
	}
	cl.mu.Unlock()
	for _, c := range conns {
		c.closeIfIdle()
	}
	cl.armSweep()
}

// prepare stamps req (opaque, flag, serialization), runs the BeforeRequest hooks and
// encodes it. A code beyond the ROCKETMQ header's 16 bits (RocketMQ 5's POP codes) goes
// in JSON whatever the client's serialization: Java writes it cut to 16 bits, which a
// broker refuses (golden p3_pop_rocketmq_533).
func (cl *Client) prepare(addr string, req *Command, flag int32) ([]byte, error) {
	req.Opaque = cl.opaque.Add(1)
	req.Flag = req.Flag&^(FlagResponse|FlagOneway) | flag
	req.Serialize = cl.cfg.serialize
	if req.Code > math.MaxInt16 || req.Code < math.MinInt16 {
		req.Serialize = SerializeJSON
	}
	for _, h := range cl.cfg.rpcHooks {
		h.BeforeRequest(addr, req)
	}
	frame, err := appendFrame(cl.pool.get(), req)
	if err != nil {
		cl.pool.put(frame)
		return nil, &CallError{Addr: addr, Code: req.Code, Opaque: req.Opaque, Err: err}
	}
	return frame, nil
}

// entry returns addr's entry, starting a dial if there is none or its connection closed.
// cl.mu is held and the Client is open.
func (cl *Client) entry(addr string) *clientConn {
	e := cl.conns[addr]
	if e != nil && (e.c == nil || !e.c.isClosed.Load()) {
		return e
	}
	e = &clientConn{ready: make(chan struct{})}
	cl.conns[addr] = e
	cl.wg.Add(1)
	go cl.dial(addr, e)
	return e
}

// sendWaiting sends frame (of call; nil for a oneway request) on addr's connection,
// waiting for a dial bounded by ctx, and returns the connection it went on. A send that
// meets a connection the idle sweep closed after getConn found it goes on a new one.
func (cl *Client) sendWaiting(ctx context.Context, addr string, frame []byte, call *call) (*conn, error) {
	c, err := cl.getConn(ctx, addr)
	if err != nil {
		return nil, err
	}
	if err = c.send(frame, call); idleClosed(err) {
		cl.connClosing(c) // it may not have left the table yet
		if c, err = cl.getConn(ctx, addr); err != nil {
			return nil, err
		}
		err = c.send(frame, call)
	}
	return c, err
}

// getConn returns addr's connection, waiting for a dial bounded by ctx.
func (cl *Client) getConn(ctx context.Context, addr string) (*conn, error) {
	cl.mu.Lock()
	if cl.closed {
		cl.mu.Unlock()
		return nil, ErrClosed
	}
	e := cl.entry(addr)
	if c := e.c; c != nil {
		cl.mu.Unlock()
		return c, nil
	}
	cl.mu.Unlock()
	select {
	case <-e.ready:
		if e.err != nil {
			return nil, e.err
		}
		return e.c, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// dial makes addr's connection for e, then runs the async sends that waited for it.
func (cl *Client) dial(addr string, e *clientConn) {
	defer cl.wg.Done()
	nc, err := cl.dialConn(addr)
	cl.mu.Lock()
	if cl.closed {
		if nc != nil {
			_ = nc.Close() // never used
		}
		err = ErrClosed
	}
	if err != nil {
		e.err = &ConnError{Addr: addr, Err: err, dial: true}
		if cl.conns[addr] == e {
			delete(cl.conns, addr)
		}
	} else {
		e.c = newConn(cl.ctx, nc, addr, connSettings{maxFrame: cl.cfg.maxFrameSize, writeTimeout: cl.cfg.writeTimeout, readTimeout: cl.cfg.readTimeout,
			idleWork: cl.cfg.idleWork, takeover: cl.cfg.takeover}, cl, &cl.pool)
		e.c.start(&cl.wg)
	}
	waiters := e.waiters
	e.waiters = nil
	close(e.ready)
	cl.mu.Unlock()
	for _, w := range waiters {
		w(e.c, e.err)
	}
}

// dialConn dials addr and, with TLS on, completes the handshake, all within the dial
// timeout.
func (cl *Client) dialConn(addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(cl.ctx, cl.cfg.dialTimeout)
	defer cancel()
	nc, err := cl.cfg.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if cl.cfg.tls == nil {
		return nc, nil
	}
	cfg := cl.cfg.tls
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = nc.Close() // the handshake error is the one to report
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return tc, nil
}

// startTimer arms an async call's timeout.
func (cl *Client) startTimer(call *call, timeout time.Duration) {
	t := time.AfterFunc(timeout, func() {
		if !cl.enter() {
			return // Close has failed the call already
		}
		defer cl.wg.Done()
		if call.done.CompareAndSwap(false, true) {
			c := call.conn.Load()
			if c != nil {
				c.forget(call)
			}
			call.finish(nil, &timeoutError{after: timeout})
			if c != nil {
				c.timedOut(call, timeout)
			}
		}
	})
	call.timer.Store(t)
	if call.done.Load() {
		t.Stop()
	}
}

// enter counts a goroutine in the Client's WaitGroup unless the Client is closed.
func (cl *Client) enter() bool {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.closed {
		return false
	}
	cl.wg.Add(1)
	return true
}

// handleRequest runs the handler for a request from the peer in its own goroutine (at
// most maxHandlerCalls, and maxOnewayCalls oneway ones, at once), or answers
// REQUEST_CODE_NOT_SUPPORTED.
func (cl *Client) handleRequest(c *conn, req *Command) {
	h := cl.cfg.handlers[req.Code]
	if h == nil {
		if !req.IsOneway() {
			c.respond(req, notSupported(req))
		}
		return
	}
	slots := cl.handlerSlots
	if req.IsOneway() {
		slots = cl.onewaySlots
	}
	select {
	case slots <- struct{}{}:
	default:
		if !req.IsOneway() {
			c.respond(req, NewResponse(req, codeSystemBusy, "[OVERLOAD]system busy, start flow control for a while"))
		}
		return
	}
	if !cl.enter() {
		<-slots
		return
	}
	c.handlers.Add(1) // busy: the idle sweep leaves it open
	go func() {
		defer cl.wg.Done()
		defer func() { <-slots }()
		defer c.handlers.Add(-1)
		resp := h(c.ctx, c.addr, req)
		if resp != nil && !req.IsOneway() {
			c.respond(req, resp)
		}
	}()
}

func (cl *Client) badFrame(c *conn, err *FrameError) {
	if f := cl.cfg.connHooks.OnBadFrame; f != nil {
		f(c.addr, err)
	}
}

func (cl *Client) connClosing(c *conn) {
	cl.mu.Lock()
	if e := cl.conns[c.addr]; e != nil && e.c == c {
		delete(cl.conns, c.addr)
	}
	cl.mu.Unlock()
}

func (cl *Client) connClosed(c *conn, err error) {
	if f := cl.cfg.connHooks.OnConnClosed; f != nil {
		f(c.addr, err)
	}
}
