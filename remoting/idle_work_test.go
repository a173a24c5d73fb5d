package remoting

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// testIdleWork is idle work that runs when a callback asked for it; its runs after the
// first block until release is closed, when block is set.
type testIdleWork struct {
	pending atomic.Bool
	runs    atomic.Int32
	block   bool
	started chan struct{} // closed when the first Run started
	release chan struct{} // closed by the test: a blocked Run returns
	done    chan struct{} // closed when the first Run returned
}

func newTestIdleWork(block bool) *testIdleWork {
	return &testIdleWork{block: block, started: make(chan struct{}), release: make(chan struct{}), done: make(chan struct{})}
}

func (w *testIdleWork) Pending() bool { return w.pending.Load() }

func (w *testIdleWork) Run(func()) {
	w.pending.Store(false)
	if w.runs.Add(1) == 1 {
		close(w.started)
		if w.block {
			<-w.release
		}
		close(w.done)
	}
}

// echoAsync sends an echo whose callback asks for idle work, and waits for the callback.
func echoAsync(t *testing.T, c *Client, addr string, w *testIdleWork) {
	t.Helper()
	got := make(chan error, 1)
	require.NoError(t, c.InvokeAsync(addr, NewRequest(codeEcho, nil, nil), time.Minute, func(_ *Command, err error) {
		w.pending.Store(true)
		got <- err
	}))
	require.NoError(t, <-got)
}

func TestIdleWorkRunsWhenTheReadLoopRunsOutOfFrames(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServer(t)
	defer s.Close()
	w := newTestIdleWork(false)
	c := newClient(t, WithIdleWork(w, time.Hour))
	defer c.Close()

	_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
	require.NoError(t, err)
	require.Zero(t, w.runs.Load(), "nothing pending, nothing run")

	echoAsync(t, c, s.Addr(), w)
	<-w.done // the read loop ran it after the callback, before waiting for the next frame
	_, err = c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
	require.NoError(t, err)
	require.Equal(t, int32(1), w.runs.Load())
}

func TestIdleWorkThatRunsLongHandsTheReadLoopOver(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServer(t)
	defer s.Close()
	w := newTestIdleWork(true)
	c := newClient(t, WithIdleWork(w, 5*time.Millisecond))

	echoAsync(t, c, s.Addr(), w)
	<-w.started
	// The read loop is stuck in Run; another goroutine must read this call's answer.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Invoke(ctx, s.Addr(), NewRequest(codeEcho, Fields{{"k", "v"}}, nil))
	require.NoError(t, err)
	require.Equal(t, "v", resp.ExtFields.Value("k"))

	// The new read loop runs idle work too.
	echoAsync(t, c, s.Addr(), w)
	require.Eventually(t, func() bool { return w.runs.Load() == 2 }, 10*time.Second, time.Millisecond)

	// Close does not wait for the Run that was taken over; that Run's goroutine ends
	// when it returns.
	require.NoError(t, c.Close())
	close(w.release)
	<-w.done
}

func TestIdleWorkRunningAtCloseIsNotWaitedFor(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServer(t)
	defer s.Close()
	w := newTestIdleWork(true)
	c := newClient(t, WithIdleWork(w, time.Hour)) // never taken over by the timer

	echoAsync(t, c, s.Addr(), w)
	<-w.started
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		close(w.release)
		t.Fatal("Close waited for a Run in progress")
	}
	_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
	require.ErrorIs(t, err, ErrClosed)
	close(w.release)
	<-w.done
	require.Equal(t, int32(1), w.runs.Load(), "a closed connection runs no more idle work")
}

func TestWithIdleWorkValidates(t *testing.T) {
	_, err := NewClient(WithIdleWork(nil, time.Millisecond))
	require.ErrorContains(t, err, "WithIdleWork(nil)")
	_, err = NewClient(WithIdleWork(newTestIdleWork(false), 0))
	require.ErrorContains(t, err, "WithIdleWork(0s)")
}

// busyWork is idle work that is always pending and takes longer than the takeover.
type busyWork struct {
	on   atomic.Bool
	runs atomic.Int32
}

func (w *busyWork) Pending() bool { return w.on.Load() }

func (w *busyWork) Run(func()) {
	w.runs.Add(1)
	time.Sleep(3 * time.Millisecond)
}

// The goroutine that takes a loop over reads before it runs idle work: work that is
// always pending and always longer than the takeover delay runs once per gap between
// frames, not in a chain of takeovers that never reads.
func TestIdleWorkTakeoverReadsFirst(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServer(t)
	defer s.Close()
	w := &busyWork{}
	c := newClient(t, WithIdleWork(w, time.Millisecond))
	_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
	require.NoError(t, err)
	w.on.Store(true)
	const calls = 20
	for range calls {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := c.Invoke(ctx, s.Addr(), NewRequest(codeEcho, nil, nil))
		cancel()
		require.NoError(t, err)
	}
	w.on.Store(false)
	// A read loop runs the work once per frame it read (one per answer) at most, plus the
	// run under way when the first call was sent.
	require.LessOrEqual(t, w.runs.Load(), int32(calls+2))
	require.NoError(t, c.Close()) // goleak waits for the last Run, taken over by Close
}

// handOffWork calls the peer back from Run, after handing the connection off.
type handOffWork struct {
	pending atomic.Bool
	call    func() error
	err     chan error
}

func (w *handOffWork) Pending() bool { return w.pending.Load() }

func (w *handOffWork) Run(handOff func()) {
	if w.pending.Swap(false) {
		handOff()
		w.err <- w.call()
	}
}

// Work that hands the connection off before it waits on the network gets its answer
// read at once: here the takeover delay is an hour, and the work waits for an answer on
// the very connection whose read loop runs it.
func TestIdleWorkHandsOffBeforeItWaits(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServer(t)
	defer s.Close()
	w := &handOffWork{err: make(chan error, 1)}
	c := newClient(t, WithIdleWork(w, time.Hour))
	defer c.Close()
	w.call = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := c.Invoke(ctx, s.Addr(), NewRequest(codeEcho, nil, nil))
		return err
	}
	got := make(chan error, 1)
	require.NoError(t, c.InvokeAsync(s.Addr(), NewRequest(codeEcho, nil, nil), time.Minute, func(_ *Command, err error) {
		w.pending.Store(true)
		got <- err
	}))
	require.NoError(t, <-got)
	require.NoError(t, <-w.err, "the call from Run was not answered")
}
