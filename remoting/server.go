package remoting

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// errConnDropped is why CloseAllConns closed a connection.
var errConnDropped = errors.New("remoting: connection dropped by Server.CloseAllConns")

// Server accepts remoting connections and dispatches their requests to handlers by code.
// It is the transport of the in-process fake broker and name server.
//
// Goroutines, all owned by the Server and ended by Close: per connection a read loop
// (which also runs the handlers) and a write loop, and the accept loop started by
// Listen. An accept loop run by Serve belongs to its caller.
type Server struct {
	cfg      serverConfig
	handlers atomic.Pointer[map[int32]ServerHandler] // copy on write
	hmu      sync.Mutex                              // serialises Handle
	opaque   atomic.Int32
	pool     framePool
	ctx      context.Context
	cancel   context.CancelFunc

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[*ServerConn]struct{}
	addr      string
	wg        sync.WaitGroup
}

// NewServer returns a Server configured by opts; an invalid option fails with an error
// naming it. It serves nothing until Serve or Listen.
func NewServer(opts ...ServerOption) (*Server, error) {
	cfg := defaultServerConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:       cfg,
		ctx:       ctx,
		cancel:    cancel,
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[*ServerConn]struct{}),
	}
	handlers := maps.Clone(cfg.handlers)
	s.handlers.Store(&handlers)
	return s, nil
}

// Handle registers h for requests with the given code, replacing any handler it had; a
// nil h removes it, so the code is answered REQUEST_CODE_NOT_SUPPORTED (3) again. It may
// be called at any time, from any goroutine; a request already being dispatched may
// still see the old handler.
func (s *Server) Handle(code int32, h ServerHandler) {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	next := maps.Clone(*s.handlers.Load())
	if h == nil {
		delete(next, code)
	} else {
		next[code] = h
	}
	s.handlers.Store(&next)
}

func (s *Server) handler(code int32) ServerHandler {
	return (*s.handlers.Load())[code]
}

// Listen listens on the TCP address addr (e.g. "127.0.0.1:0") and serves it in a
// goroutine owned by the Server. Addr reports the address once Listen returns.
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("remoting: listen on %s: %w", addr, err)
	}
	if err := s.addListener(ln); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ln.Close() // Close ran in between; nothing was served
		return ErrClosed
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		if err := s.serve(ln); err != nil && !errors.Is(err, ErrClosed) {
			if f := s.cfg.hooks.OnServeError; f != nil {
				f(err)
			}
		}
	}()
	return nil
}

// Serve accepts connections on ln until Close, and returns ErrClosed then; it returns
// earlier only if Accept fails with a permanent error. It closes ln when it returns. The
// caller may wrap ln (to delay or refuse connections). With WithServerTLS, each accepted
// connection is served over TLS.
func (s *Server) Serve(ln net.Listener) error {
	if err := s.addListener(ln); err != nil {
		return err
	}
	return s.serve(ln)
}

// Addr returns the address of the first listener given to Serve or Listen, or "" if
// there is none yet.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

func (s *Server) addListener(ln net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = ln.Close() // never served
		return ErrClosed
	}
	s.listeners[ln] = struct{}{}
	if s.addr == "" {
		s.addr = ln.Addr().String()
	}
	return nil
}

func (s *Server) serve(ln net.Listener) error {
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		_ = ln.Close() // may already be closed by Close
	}()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrClosed
			}
			var te interface{ Temporary() bool }
			if errors.As(err, &te) && te.Temporary() {
				// Out of file descriptors and the like: wait and try again.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				t := time.NewTimer(backoff)
				select {
				case <-t.C:
				case <-s.ctx.Done():
					t.Stop()
					return ErrClosed
				}
				continue
			}
			return fmt.Errorf("remoting: accept on %s: %w", ln.Addr(), err)
		}
		backoff = 0
		s.accept(nc)
	}
}

// accept sets up and starts one connection.
func (s *Server) accept(nc net.Conn) {
	if s.cfg.tls != nil {
		nc = tls.Server(nc, s.cfg.tls)
	}
	remote := nc.RemoteAddr().String()
	sc := &ServerConn{s: s, remote: remote}
	sc.c = newConn(s.ctx, nc, remote, connSettings{maxFrame: s.cfg.maxFrameSize, writeTimeout: s.cfg.writeTimeout, readTimeout: s.cfg.readTimeout}, sc, &s.pool)
	if f := s.cfg.hooks.OnConnOpened; f != nil {
		f(sc)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		sc.c.close(ErrClosed)
		return
	}
	s.conns[sc] = struct{}{}
	sc.c.start(&s.wg)
	s.mu.Unlock()
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Conns returns the connections open now.
func (s *Server) Conns() []*ServerConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*ServerConn, 0, len(s.conns))
	for sc := range s.conns {
		out = append(out, sc)
	}
	return out
}

// CloseAllConns closes every open connection (fault injection); the Server keeps
// accepting new ones. Their pending broker-initiated calls fail.
func (s *Server) CloseAllConns() {
	for _, sc := range s.Conns() {
		sc.c.close(errConnDropped)
	}
}

// Close stops accepting, closes every connection (their pending calls fail with an error
// wrapping ErrClosed) and waits for every goroutine the Server started. It must not be
// called from a handler or hook. Calling it again returns nil at once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	lns := make([]net.Listener, 0, len(s.listeners))
	for ln := range s.listeners {
		lns = append(lns, ln)
	}
	conns := make([]*ServerConn, 0, len(s.conns))
	for sc := range s.conns {
		conns = append(conns, sc)
	}
	s.mu.Unlock()
	s.cancel()
	for _, ln := range lns {
		_ = ln.Close() // its accept loop returns ErrClosed
	}
	for _, sc := range conns {
		sc.c.close(ErrClosed)
	}
	s.wg.Wait()
	return nil
}
