package remoting

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestInvokeSync(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServer(t)
	defer s.Close()
	for _, st := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
		t.Run(st.String(), func(t *testing.T) {
			c := newClient(t, WithSerialization(st))
			defer c.Close()
			for i := range 3 {
				req := NewRequest(codeEcho, Fields{{"topic", "Grüße"}, {"i", fmt.Sprint(i)}}, []byte("hello"))
				resp, err := c.Invoke(context.Background(), s.Addr(), req)
				require.NoError(t, err)
				require.Equal(t, int32(i+1), req.Opaque, "opaques count up per Client")
				require.Equal(t, req.Opaque, resp.Opaque)
				require.True(t, resp.IsResponse())
				require.Equal(t, st, resp.Serialize, "answered in the request's serialization")
				require.Equal(t, "echo", resp.Remark)
				require.Equal(t, req.ExtFields, resp.ExtFields)
				require.Equal(t, []byte("hello"), resp.Body)
			}
		})
	}
}

func TestInvokeAsync(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServer(t)
	defer s.Close()
	c := newClient(t)
	defer c.Close()

	const n = 200
	results := make(chan error, n)
	var calls atomic.Int32
	for i := range n {
		req := NewRequest(codeEcho, Fields{{"i", fmt.Sprint(i)}}, nil)
		err := c.InvokeAsync(s.Addr(), req, time.Minute, func(resp *Command, err error) {
			calls.Add(1)
			if err == nil && resp.ExtFields.Value("i") != fmt.Sprint(i) {
				err = fmt.Errorf("response %q to request %d", resp.ExtFields.Value("i"), i)
			}
			results <- err
		})
		require.NoError(t, err)
	}
	for range n {
		require.NoError(t, <-results)
	}
	require.NoError(t, c.Close())
	require.Equal(t, int32(n), calls.Load(), "each callback exactly once")
}

// InvokeAsync does not wait for the dial: with a dialer that blocks, it returns at once
// and the call completes once the dial is released.
func TestInvokeAsyncDoesNotBlockOnDial(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServer(t)
	defer s.Close()
	release := make(chan struct{})
	var d net.Dialer
	c := newClient(t, WithDialTimeout(time.Minute), WithDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return d.DialContext(ctx, network, addr)
	}))
	defer c.Close()
	done := make(chan error, 1)
	require.NoError(t, c.InvokeAsync(s.Addr(), NewRequest(codeEcho, nil, nil), time.Minute, func(_ *Command, err error) { done <- err }))
	close(release)
	require.NoError(t, <-done)
}

func TestInvokeAsyncTimeout(t *testing.T) {
	defer goleak.VerifyNone(t)
	heldCh := make(chan held, 10)
	s := startServer(t, WithServerHandler(codeHold, holdHandler(heldCh)))
	defer s.Close()
	c := newClient(t)
	defer c.Close()

	done := make(chan error, 1)
	req := NewRequest(codeHold, nil, nil)
	// The timeout leaves the echo below ample time to be answered first, even on a loaded
	// machine (with 500 ms it was a suspect of flaky CI runs).
	require.NoError(t, c.InvokeAsync(s.Addr(), req, 2*time.Second, func(resp *Command, err error) {
		require.Nil(t, resp)
		done <- err
	}))
	h := <-heldCh
	// An answer to another call arrives meanwhile: the peer is alive, so the timeout
	// leaves the connection open (see TestStalledPeer for one that answers nothing).
	_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
	require.NoError(t, err)
	err = <-done
	require.ErrorIs(t, err, ErrTimeout)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, s.Addr(), ce.Addr)
	require.Equal(t, codeHold, ce.Code)
	require.Equal(t, req.Opaque, ce.Opaque)
	require.Contains(t, err.Error(), fmt.Sprintf("request code %d (opaque %d) to %s: request timed out after 2s", codeHold, req.Opaque, s.Addr()))
	requireNoPending(t, c, s.Addr())

	// A late answer is dropped, and the connection still works.
	require.NoError(t, h.sc.Respond(NewResponse(h.req, 0, "late")))
	resp, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
	require.NoError(t, err)
	require.Equal(t, "echo", resp.Remark)
}

func TestInvokeContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	heldCh := make(chan held, 10)
	s := startServer(t, WithServerHandler(codeHold, holdHandler(heldCh)))
	defer s.Close()
	c := newClient(t)
	defer c.Close()

	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := c.Invoke(ctx, s.Addr(), NewRequest(codeHold, nil, nil))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.NotErrorIs(t, err, ErrTimeout, "the ctx's error, not a made-up timeout")
		require.ErrorContains(t, err, s.Addr())
		<-heldCh
		// Nothing at all came back on the connection: it was closed as stalled.
		c.mu.Lock()
		e := c.conns[s.Addr()]
		c.mu.Unlock()
		require.Nil(t, e)
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-heldCh
			cancel()
		}()
		_, err := c.Invoke(ctx, s.Addr(), NewRequest(codeHold, nil, nil))
		require.ErrorIs(t, err, context.Canceled)
		requireNoPending(t, c, s.Addr())
	})
	t.Run("already done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.Invoke(ctx, s.Addr(), NewRequest(codeEcho, nil, nil))
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, c.InvokeOneway(ctx, s.Addr(), NewRequest(codeEcho, nil, nil)), context.Canceled)
	})
}

// requireNoPending checks that the connection to addr has no pending call left.
func requireNoPending(t *testing.T, c *Client, addr string) {
	t.Helper()
	c.mu.Lock()
	e := c.conns[addr]
	c.mu.Unlock()
	require.NotNil(t, e)
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	require.Empty(t, e.c.pending)
}

func TestInvokeOneway(t *testing.T) {
	defer goleak.VerifyNone(t)
	peer := newRawPeer(t)
	defer peer.close()
	c := newClient(t)
	defer c.Close()

	req := NewRequest(35, Fields{{"clientID", "x"}}, nil)
	require.NoError(t, c.InvokeOneway(context.Background(), peer.addr(), req))
	conn := peer.accept(t)
	defer conn.Close()
	got, err := NewFrameReader(conn, 0).Read()
	require.NoError(t, err)
	require.True(t, got.IsOneway())
	require.False(t, got.IsResponse())
	require.Equal(t, req.Opaque, got.Opaque)
	require.Equal(t, "x", got.ExtFields.Value("clientID"))
}

// One lost connection fails all of its 100 pending calls, sync and async, with a
// *ConnError naming the address; the next call dials again.
func TestConnectionLossFailsPendingCalls(t *testing.T) {
	defer goleak.VerifyNone(t)
	heldCh := make(chan held, 100)
	s := startServer(t, WithServerHandler(codeHold, holdHandler(heldCh)))
	defer s.Close()
	closedCh := make(chan error, 1)
	c := newClient(t, WithConnHooks(ConnHooks{OnConnClosed: func(addr string, err error) { closedCh <- err }}))
	defer c.Close()

	const n = 100
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		if i%2 == 0 {
			require.NoError(t, c.InvokeAsync(s.Addr(), NewRequest(codeHold, nil, nil), time.Hour, func(_ *Command, err error) { errs <- err }))
			continue
		}
		wg.Go(func() {
			_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeHold, nil, nil))
			errs <- err
		})
	}
	for range n {
		<-heldCh
	}
	s.CloseAllConns()
	for range n {
		err := <-errs
		var connErr *ConnError
		require.ErrorAs(t, err, &connErr)
		require.Equal(t, s.Addr(), connErr.Addr)
		require.ErrorContains(t, err, s.Addr())
		require.ErrorContains(t, err, fmt.Sprintf("request code %d (opaque ", codeHold))
	}
	wg.Wait()
	require.Error(t, <-closedCh)

	resp, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
	require.NoError(t, err, "redials")
	require.Equal(t, "echo", resp.Remark)
}

func TestConcurrentDialMakesOneConnection(t *testing.T) {
	defer goleak.VerifyNone(t)
	var opened atomic.Int32
	s := startServer(t, WithServerHooks(ServerHooks{OnConnOpened: func(*ServerConn) { opened.Add(1) }}))
	defer s.Close()
	var dials atomic.Int32
	var d net.Dialer
	c := newClient(t, WithDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return d.DialContext(ctx, network, addr)
	}))
	defer c.Close()

	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, 64)
	for range 50 {
		wg.Go(func() {
			<-start
			_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
			errs <- err
		})
	}
	for range 14 {
		require.NoError(t, c.InvokeAsync(s.Addr(), NewRequest(codeEcho, nil, nil), time.Minute, func(_ *Command, err error) { errs <- err }))
	}
	close(start)
	wg.Wait()
	for range 64 {
		require.NoError(t, <-errs)
	}
	require.Equal(t, int32(1), dials.Load())
	require.Equal(t, int32(1), opened.Load())
}

func TestDialFailure(t *testing.T) {
	defer goleak.VerifyNone(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now

	c := newClient(t)
	defer c.Close()
	_, err = c.Invoke(context.Background(), addr, NewRequest(codeEcho, nil, nil))
	var connErr *ConnError
	require.ErrorAs(t, err, &connErr)
	require.Equal(t, addr, connErr.Addr)
	require.ErrorContains(t, err, "connection: dial tcp")

	done := make(chan error, 1)
	require.NoError(t, c.InvokeAsync(addr, NewRequest(codeEcho, nil, nil), time.Minute, func(_ *Command, err error) { done <- err }))
	require.ErrorAs(t, <-done, &connErr)
}

func TestCloseFailsCallsInFlight(t *testing.T) {
	defer goleak.VerifyNone(t)
	heldCh := make(chan held, 100)
	s := startServer(t, WithServerHandler(codeHold, holdHandler(heldCh)))
	defer s.Close()
	c := newClient(t)

	const n = 20
	errs := make(chan error, 2*n)
	var wg sync.WaitGroup
	for range n {
		require.NoError(t, c.InvokeAsync(s.Addr(), NewRequest(codeHold, nil, nil), time.Hour, func(_ *Command, err error) { errs <- err }))
		wg.Go(func() {
			_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeHold, nil, nil))
			errs <- err
		})
	}
	for range 2 * n {
		<-heldCh
	}
	require.NoError(t, c.Close())
	wg.Wait()
	for range 2 * n {
		require.ErrorIs(t, <-errs, ErrClosed)
	}
	_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, c.InvokeAsync(s.Addr(), NewRequest(codeEcho, nil, nil), time.Second, func(*Command, error) {
		t.Error("callback after a refused InvokeAsync")
	}), ErrClosed)
	require.ErrorIs(t, c.InvokeOneway(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil)), ErrClosed)
	require.NoError(t, c.Close(), "Close twice")
}

// Close while a dial is in progress fails the calls waiting for it with ErrClosed.
func TestCloseDuringDial(t *testing.T) {
	defer goleak.VerifyNone(t)
	entered := make(chan struct{})
	c := newClient(t, WithDialTimeout(time.Hour), WithDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		close(entered)
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	done := make(chan error, 1)
	require.NoError(t, c.InvokeAsync("127.0.0.1:1", NewRequest(codeEcho, nil, nil), time.Hour, func(_ *Command, err error) { done <- err }))
	<-entered
	require.NoError(t, c.Close())
	require.ErrorIs(t, <-done, ErrClosed)
}

func TestCloseConn(t *testing.T) {
	defer goleak.VerifyNone(t)
	heldCh := make(chan held, 10)
	var opened atomic.Int32
	s := startServer(t, WithServerHandler(codeHold, holdHandler(heldCh)),
		WithServerHooks(ServerHooks{OnConnOpened: func(*ServerConn) { opened.Add(1) }}))
	defer s.Close()
	c := newClient(t)
	defer c.Close()

	done := make(chan error, 1)
	require.NoError(t, c.InvokeAsync(s.Addr(), NewRequest(codeHold, nil, nil), time.Hour, func(_ *Command, err error) { done <- err }))
	<-heldCh
	c.CloseConn(s.Addr())
	err := <-done
	require.ErrorIs(t, err, ErrClosed)
	var connErr *ConnError
	require.ErrorAs(t, err, &connErr)
	_, err = c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
	require.NoError(t, err)
	require.Equal(t, int32(2), opened.Load())
}

type recordingHook struct {
	mu    sync.Mutex
	resps []*Command
}

func (h *recordingHook) BeforeRequest(addr string, req *Command) {
	req.ExtFields.Set("AccessKey", "ak")
	req.ExtFields.Set("Signature", fmt.Sprintf("sig-%d-%s", req.Opaque, addr))
}

func (h *recordingHook) AfterResponse(addr string, req, resp *Command) {
	h.mu.Lock()
	h.resps = append(h.resps, resp)
	h.mu.Unlock()
}

func TestRPCHook(t *testing.T) {
	defer goleak.VerifyNone(t)
	seen := make(chan *Command, 1)
	s := startServer(t, WithServerHandler(1, func(sc *ServerConn, req *Command) *Command {
		seen <- req
		return NewResponse(req, 0, "")
	}))
	defer s.Close()
	hook := &recordingHook{}
	c := newClient(t, WithRPCHook(hook))
	defer c.Close()

	resp, err := c.Invoke(context.Background(), s.Addr(), NewRequest(1, Fields{{"topic", "t"}}, nil))
	require.NoError(t, err)
	req := <-seen
	require.Equal(t, "ak", req.ExtFields.Value("AccessKey"))
	require.Equal(t, fmt.Sprintf("sig-%d-%s", req.Opaque, s.Addr()), req.ExtFields.Value("Signature"))
	require.Equal(t, "t", req.ExtFields.Value("topic"))
	hook.mu.Lock()
	defer hook.mu.Unlock()
	require.Equal(t, []*Command{resp}, hook.resps)
}

func TestOutgoingLimits(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServer(t)
	defer s.Close()

	t.Run("frame too large", func(t *testing.T) {
		c := newClient(t, WithMaxFrameSize(1024))
		defer c.Close()
		_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, make([]byte, 2000)))
		require.ErrorContains(t, err, "exceeds the maximum frame size 1024")
		require.ErrorContains(t, err, s.Addr())
		err = c.InvokeAsync(s.Addr(), NewRequest(codeEcho, nil, make([]byte, 2000)), time.Second, func(*Command, error) {
			t.Error("callback after a refused InvokeAsync")
		})
		require.ErrorContains(t, err, "exceeds the maximum frame size 1024")
	})
	t.Run("code beyond int16 in ROCKETMQ goes in JSON", func(t *testing.T) {
		c := newClient(t, WithSerialization(SerializeRocketMQ))
		defer c.Close()
		resp, err := c.Invoke(context.Background(), s.Addr(), NewRequest(200050, nil, nil))
		require.NoError(t, err)
		require.Equal(t, codeRequestCodeNotSupported, resp.Code)
		require.Equal(t, " request type 200050 not supported", resp.Remark, "the code arrived whole")
	})
	t.Run("code beyond int16 in JSON", func(t *testing.T) {
		c := newClient(t)
		defer c.Close()
		resp, err := c.Invoke(context.Background(), s.Addr(), NewRequest(200050, nil, nil))
		require.NoError(t, err)
		require.Equal(t, codeRequestCodeNotSupported, resp.Code)
		require.Equal(t, " request type 200050 not supported", resp.Remark)
	})
}

func TestClientOptionErrors(t *testing.T) {
	tests := []struct {
		name string
		opt  ClientOption
		want string
	}{
		{"dial timeout", WithDialTimeout(0), "WithDialTimeout(0s): must be positive"},
		{"max frame small", WithMaxFrameSize(10), "WithMaxFrameSize(10): must be between 1024 and 1073741824"},
		{"max frame large", WithMaxFrameSize(1 << 31), "WithMaxFrameSize(2147483648)"},
		{"write timeout", WithWriteTimeout(-time.Second), "WithWriteTimeout(-1s): must be positive"},
		{"serialization", WithSerialization(5), "WithSerialization(5)"},
		{"nil dialer", WithDialer(nil), "WithDialer(nil)"},
		{"nil hook", WithRPCHook(nil), "WithRPCHook(nil)"},
		{"nil handler", WithHandler(40, nil), "WithHandler(40, nil)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewClient(tt.opt)
			require.Nil(t, c)
			require.ErrorContains(t, err, "remoting: "+tt.want)
		})
	}
	h := func(context.Context, string, *Command) *Command { return nil }
	_, err := NewClient(WithHandler(40, h), WithHandler(40, h))
	require.ErrorContains(t, err, "WithHandler(40): a handler for code 40 is already registered")
}

func TestInvokeAsyncArgumentErrors(t *testing.T) {
	c := newClient(t)
	defer c.Close()
	require.ErrorContains(t, c.InvokeAsync("x:1", NewRequest(1, nil, nil), time.Second, nil), "nil callback")
	require.ErrorContains(t, c.InvokeAsync("x:1", NewRequest(1, nil, nil), 0, func(*Command, error) {}), "timeout 0s must be positive")
}

// A connection that carries nothing for the idle timeout is closed, and the next call
// dials again; one with a call waiting for its answer is kept, however long it waits.
func TestIdleConnectionsAreClosed(t *testing.T) {
	defer goleak.VerifyNone(t)
	heldCh := make(chan held, 1)
	s := startServer(t, WithServerHandler(codeHold, holdHandler(heldCh)))
	defer s.Close()
	closed := make(chan error, 4)
	c := newClient(t, WithIdleTimeout(50*time.Millisecond), WithConnHooks(ConnHooks{OnConnClosed: func(_ string, err error) { closed <- err }}))
	defer c.Close()

	_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
	require.NoError(t, err)
	select {
	case err := <-closed:
		require.ErrorIs(t, err, errIdle)
	case <-time.After(5 * time.Second):
		t.Fatal("an idle connection stayed open")
	}

	// Dialed again; a held call keeps it open through several sweeps.
	done := make(chan error, 1)
	require.NoError(t, c.InvokeAsync(s.Addr(), NewRequest(codeHold, nil, nil), time.Minute, func(_ *Command, err error) { done <- err }))
	h := <-heldCh
	time.Sleep(300 * time.Millisecond) // six idle timeouts
	require.Empty(t, closed, "a connection waiting for an answer is not idle")
	require.NoError(t, h.sc.Respond(NewResponse(h.req, 0, "")))
	require.NoError(t, <-done)
}

func TestIdleTimeoutOption(t *testing.T) {
	_, err := NewClient(WithIdleTimeout(-time.Second))
	require.ErrorContains(t, err, "WithIdleTimeout(-1s)")
	c, err := NewClient(WithIdleTimeout(0)) // connections kept until they fail
	require.NoError(t, err)
	require.NoError(t, c.Close())
}

// Calls racing the idle sweep never fail because of it: a new connection is not idle
// before a sweep has seen it, the sweep's check and close are one critical section with
// send, and a call that finds its connection just closed by the sweep goes on a new one.
// (A review reproduced 108 failures in 3,000 calls with a 300 µs idle timeout before.)
func TestCallsRacingTheIdleSweep(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServer(t)
	defer s.Close()
	c := newClient(t, WithIdleTimeout(300*time.Microsecond))
	defer c.Close()
	for i := range 1000 {
		_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
		require.NoError(t, err, "call %d", i)
		require.NoError(t, c.InvokeOneway(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil)), "oneway %d", i)
		if i%10 == 0 {
			time.Sleep(time.Millisecond) // let sweeps close the connection now and then
		}
	}
}

// A sender writes directly when the connection is free (no hand-off to the write loop),
// but never waits on the network: against a peer that stops reading, what the socket
// does not take goes to the write loop, and InvokeAsync returns at once; the write loop
// then fails the connection after the write timeout. (A sender that wrote with a
// blocking write waited the whole write timeout here.)
func TestSendersNeverWaitOnTheNetwork(t *testing.T) {
	defer goleak.VerifyNone(t)
	peer := newRawPeer(t)
	defer peer.close()
	c := newClient(t, WithWriteTimeout(3*time.Second))
	defer c.Close()
	require.NoError(t, c.InvokeOneway(context.Background(), peer.addr(), NewRequest(1, nil, nil)))
	conn := peer.accept(t) // never read
	defer conn.Close()

	body := make([]byte, 4<<20)
	errs := make(chan error, 8)
	start := time.Now()
	for range 8 { // 32 MiB: more than loopback socket buffers hold
		require.NoError(t, c.InvokeAsync(peer.addr(), NewRequest(codeEcho, nil, body), time.Hour, func(_ *Command, err error) { errs <- err }))
	}
	require.Less(t, time.Since(start), 2500*time.Millisecond, "the senders waited for the peer (3 s)")
	for range 8 {
		var connErr *ConnError
		require.ErrorAs(t, <-errs, &connErr, "failed by the write loop after the write timeout")
	}
}
