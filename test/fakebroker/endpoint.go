package fakebroker

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/remoting"
)

// maxBacklog bounds the requests and answers a paused server keeps for Resume; beyond
// it they are dropped, as if lost.
const maxBacklog = 1 << 16

// conn is a client connection as handlers see it: a *remoting.ServerConn, or a fake in
// tests that call handlers without a network.
type conn interface {
	RemoteAddr() string
	Respond(resp *remoting.Command) error
	InvokeOneway(req *remoting.Command) error
	Invoke(ctx context.Context, req *remoting.Command) (*remoting.Command, error)
	Close()
}

// handler handles one request code; like a remoting.ServerHandler, it must not block.
type handler func(sc conn, req *remoting.Command) *remoting.Command

// endpoint is what a broker and the name server share: a remoting.Server on a fixed
// address that can be stopped and started again, the per-code request counters, fault
// injection, pause, and refusing connections. Handlers are wrapped by dispatch.
type endpoint struct {
	what     string // "broker broker-a", "name server": for errors
	sched    *scheduler
	handlers map[int32]handler
	onClosed func(sc conn) // told about each closed connection; may be nil

	mu          sync.Mutex
	addr        string // fixed once the first start picked the port
	srv         *remoting.Server
	running     bool
	gen         uint64 // incremented by each start: work started before is stale
	counts      map[int32]int
	faults      []*Injection
	lags        map[int32]Lag // see Lag; nil: none
	paused      bool
	backlog     []func()
	refuse      bool
	refuseUntil time.Time // zero: until AcceptConnections
	conns       map[*trackedConn]struct{}
	serveWG     sync.WaitGroup
}

func newEndpoint(what, addr string, sched *scheduler) *endpoint {
	return &endpoint{
		what:     what,
		addr:     addr,
		sched:    sched,
		handlers: make(map[int32]handler),
		counts:   make(map[int32]int),
		conns:    make(map[*trackedConn]struct{}),
	}
}

// handle registers h for code; only before the first start.
func (ep *endpoint) handle(code int32, h handler) { ep.handlers[code] = h }

// start listens on the endpoint's address (picking a free port the first time, when the
// port is 0), calls beforeServe (when not nil) with the address, and serves: no request
// is handled before beforeServe returns.
func (ep *endpoint) start(beforeServe func(addr string)) error {
	ep.mu.Lock()
	if ep.running {
		ep.mu.Unlock()
		return fmt.Errorf("fakebroker: %s is already running on %s", ep.what, ep.addr)
	}
	opts := []remoting.ServerOption{remoting.WithServerHooks(remoting.ServerHooks{
		OnConnClosed: func(sc *remoting.ServerConn, _ error) {
			if ep.onClosed != nil {
				ep.onClosed(sc)
			}
		},
	})}
	for code, h := range ep.handlers {
		opts = append(opts, remoting.WithServerHandler(code, ep.wrap(h)))
	}
	srv, err := remoting.NewServer(opts...)
	if err != nil {
		ep.mu.Unlock()
		return fmt.Errorf("fakebroker: %s: %w", ep.what, err)
	}
	nl, err := net.Listen("tcp", ep.addr)
	if err != nil {
		ep.mu.Unlock()
		_ = srv.Close()
		return fmt.Errorf("fakebroker: %s: listen on %s: %w", ep.what, ep.addr, err)
	}
	ep.addr = nl.Addr().String()
	ep.srv = srv
	ep.running = true
	ep.gen++
	ep.paused = false
	ep.backlog = nil
	ep.serveWG.Add(1)
	addr := ep.addr
	ep.mu.Unlock()
	if beforeServe != nil {
		beforeServe(addr)
	}
	go func() {
		defer ep.serveWG.Done()
		_ = srv.Serve(&listener{Listener: nl, ep: ep}) // returns ErrClosed on stop
	}()
	return nil
}

// stop closes the server and every connection (with a reset when kill is set) and
// waits for its goroutines. It reports whether the endpoint was running.
func (ep *endpoint) stop(kill bool) bool {
	ep.mu.Lock()
	if !ep.running {
		ep.mu.Unlock()
		return false
	}
	srv := ep.srv
	ep.running = false
	ep.srv = nil
	ep.paused = false
	ep.backlog = nil
	if kill {
		for c := range ep.conns {
			_ = c.SetLinger(0) // close with a reset, not a FIN
		}
	}
	ep.mu.Unlock()
	_ = srv.Close()
	ep.serveWG.Wait()
	return true
}

func (ep *endpoint) isRunning() bool {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.running
}

// generation returns the number of the current run (0 when never started).
func (ep *endpoint) generation() uint64 {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.gen
}

func (ep *endpoint) address() string {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.addr
}

// wrap turns a handler into the ServerHandler the transport calls: it counts the
// request and applies pause and faults first.
func (ep *endpoint) wrap(h handler) remoting.ServerHandler {
	return func(sc *remoting.ServerConn, req *remoting.Command) *remoting.Command {
		ep.mu.Lock()
		ep.counts[req.Code]++
		if ep.paused {
			if len(ep.backlog) < maxBacklog {
				ep.backlog = append(ep.backlog, func() {
					if resp := ep.process(sc, req, h); resp != nil && !req.IsOneway() {
						ep.respond(sc, resp)
					}
				})
			}
			ep.mu.Unlock()
			return nil
		}
		if d := ep.lagOf(req.Code); d > 0 {
			ep.mu.Unlock()
			ep.processLater(sc, req, h, d)
			return nil
		}
		ep.mu.Unlock()
		return ep.process(sc, req, h)
	}
}

// process applies the first fault that catches req, or handles it.
func (ep *endpoint) process(sc conn, req *remoting.Command, h handler) *remoting.Command {
	if in := ep.catch(req.Code); in != nil {
		return in.apply(sc, req, h)
	}
	return h(sc, req)
}

func (ep *endpoint) catch(code int32) *Injection {
	ep.mu.Lock()
	faults := ep.faults
	ep.mu.Unlock()
	if len(faults) == 0 {
		return nil
	}
	now := time.Now()
	for _, in := range faults {
		if in.take(code, now) {
			return in
		}
	}
	// Drop what is spent so the list does not grow.
	ep.mu.Lock()
	ep.faults = slices.DeleteFunc(slices.Clone(ep.faults), func(in *Injection) bool { return in.spent(now) })
	ep.mu.Unlock()
	return nil
}

// respond sends a response later than its handler returned (a long poll, a delayed
// request); a paused server keeps it for Resume.
func (ep *endpoint) respond(sc conn, resp *remoting.Command) {
	ep.mu.Lock()
	if ep.paused {
		if len(ep.backlog) < maxBacklog {
			ep.backlog = append(ep.backlog, func() { _ = sc.Respond(resp) })
		}
		ep.mu.Unlock()
		return
	}
	ep.mu.Unlock()
	_ = sc.Respond(resp) // the connection may have closed: nobody is left to answer
}

// oneway sends a request the server starts (NOTIFY_CONSUMER_IDS_CHANGED...); a paused
// server keeps it for Resume.
func (ep *endpoint) oneway(sc conn, req *remoting.Command) {
	ep.mu.Lock()
	if ep.paused {
		if len(ep.backlog) < maxBacklog {
			ep.backlog = append(ep.backlog, func() { _ = sc.InvokeOneway(req) })
		}
		ep.mu.Unlock()
		return
	}
	ep.mu.Unlock()
	_ = sc.InvokeOneway(req)
}

func (ep *endpoint) inject(f Fault) (*Injection, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	in := &Injection{ep: ep, fault: f}
	if f.For > 0 {
		in.until = time.Now().Add(f.For)
	}
	ep.mu.Lock()
	ep.faults = append(slices.Clone(ep.faults), in)
	ep.mu.Unlock()
	return in, nil
}

func (ep *endpoint) removeFault(in *Injection) {
	ep.mu.Lock()
	ep.faults = slices.DeleteFunc(slices.Clone(ep.faults), func(x *Injection) bool { return x == in })
	ep.mu.Unlock()
}

func (ep *endpoint) clearFaults() {
	ep.mu.Lock()
	faults := ep.faults
	ep.faults = nil
	ep.mu.Unlock()
	for _, in := range faults {
		in.mu.Lock()
		in.removed = true
		in.mu.Unlock()
	}
}

func (ep *endpoint) pause() {
	ep.mu.Lock()
	if ep.running {
		ep.paused = true
	}
	ep.mu.Unlock()
}

func (ep *endpoint) resume() {
	ep.mu.Lock()
	backlog := ep.backlog
	ep.backlog = nil
	ep.paused = false
	ep.mu.Unlock()
	for _, fn := range backlog {
		fn()
	}
}

func (ep *endpoint) closeConns() {
	ep.mu.Lock()
	srv := ep.srv
	ep.mu.Unlock()
	if srv != nil {
		srv.CloseAllConns()
	}
}

func (ep *endpoint) refuseConns(d time.Duration) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	ep.refuse = true
	ep.refuseUntil = time.Time{}
	if d > 0 {
		ep.refuseUntil = time.Now().Add(d)
	}
}

func (ep *endpoint) acceptConns() {
	ep.mu.Lock()
	ep.refuse = false
	ep.mu.Unlock()
}

func (ep *endpoint) refusing() bool {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.refuse && !ep.refuseUntil.IsZero() && !time.Now().Before(ep.refuseUntil) {
		ep.refuse = false
	}
	return ep.refuse
}

func (ep *endpoint) requests(code int32) int {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.counts[code]
}

func (ep *endpoint) requestCounts() map[int32]int {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	out := make(map[int32]int, len(ep.counts))
	for k, v := range ep.counts {
		out[k] = v
	}
	return out
}

// listener wraps the server's listener: it refuses connections while asked to (accept,
// then reset) and tracks the connections it hands out so Kill can reset them.
type listener struct {
	net.Listener
	ep *endpoint
}

// Accept returns the next connection not refused.
func (l *listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc, ok := nc.(*net.TCPConn)
		if !ok {
			return nc, nil
		}
		if l.ep.refusing() {
			_ = tc.SetLinger(0)
			_ = tc.Close()
			continue
		}
		c := &trackedConn{TCPConn: tc, ep: l.ep}
		l.ep.mu.Lock()
		l.ep.conns[c] = struct{}{}
		l.ep.mu.Unlock()
		return c, nil
	}
}

// trackedConn is an accepted connection the endpoint knows about. Embedding
// *net.TCPConn keeps the methods the transport looks for (SetNoDelay, writev).
type trackedConn struct {
	*net.TCPConn
	ep   *endpoint
	once sync.Once
}

// Close forgets the connection and closes it.
func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.ep.mu.Lock()
		delete(c.ep.conns, c)
		c.ep.mu.Unlock()
	})
	return c.TCPConn.Close()
}
