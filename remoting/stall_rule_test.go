package remoting

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A peer that is streaming a large answer at ~2.5 MB/s is not stalled: a short call
// that times out meanwhile does not close the connection and fail the call whose answer
// is arriving (whole frames were counted; a frame in progress was not).
func TestStallRuleIgnoresAFrameArriving(t *testing.T) {
	peer, c, closed := stallPair(t)

	done := make(chan error, 1)
	require.NoError(t, c.InvokeAsync(peer.addr(), NewRequest(codeEcho, nil, nil), 10*time.Second,
		func(_ *Command, err error) { done <- err }))
	nc := peer.accept(t)
	defer nc.Close()
	fr := NewFrameReader(nc, 0)
	reqA, err := fr.Read()
	require.NoError(t, err)

	go func() { // the peer streams A's 2 MiB answer in 64 KiB pieces, 25 ms apart
		f := answerFrame(t, reqA, make([]byte, 2<<20))
		for len(f) > 0 {
			n := min(len(f), 64<<10)
			if _, err := nc.Write(f[:n]); err != nil {
				return
			}
			f = f[n:]
			time.Sleep(25 * time.Millisecond)
		}
	}()
	// B: a short sync call the peer is slow to answer while it streams A's answer.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err = c.Invoke(ctx, peer.addr(), NewRequest(codeEcho, nil, nil))
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, waitErr(t, done), "A's answer was arriving the whole time")
	select {
	case err := <-closed:
		t.Fatalf("healthy connection closed: %v", err)
	default:
	}
}

// A call whose own frame still waits behind our write backlog (the peer reads, at
// ~4 MB/s) times out: the peer cannot have answered what it has not received, so the
// connection is not closed as stalled (it was, failing every call on it).
func TestStallRuleIgnoresAnUnsentRequest(t *testing.T) {
	peer, c, closed := stallPair(t)

	done := make(chan error, 4)
	big := make([]byte, 4<<20)
	for range 3 {
		require.NoError(t, c.InvokeAsync(peer.addr(), NewRequest(codeEcho, nil, big), 30*time.Second,
			func(_ *Command, err error) { done <- err }))
	}
	nc := peer.accept(t)
	defer nc.Close()
	go func() { // the peer reads steadily at ~4 MB/s
		buf := make([]byte, 40<<10)
		for {
			if _, err := nc.Read(buf); err != nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err := c.Invoke(ctx, peer.addr(), NewRequest(codeEcho, nil, nil))
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case err := <-closed:
		t.Fatalf("connection whose peer is reading closed: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
}

// stallPair starts a raw peer and a client whose connection closes are reported on
// closed; both end with the test.
func stallPair(t *testing.T) (peer *rawPeer, c *Client, closed chan error) {
	t.Helper()
	peer = newRawPeer(t)
	t.Cleanup(peer.close)
	closed = make(chan error, 4)
	c = newClient(t, WithConnHooks(ConnHooks{OnConnClosed: func(_ string, err error) { closed <- err }}))
	t.Cleanup(func() { c.Close() })
	return peer, c, closed
}
