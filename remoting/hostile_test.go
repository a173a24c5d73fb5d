package remoting

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// hostilePeer is a loopback TCP server that reads requests and answers each one as its
// behaviour says (or never), counting the connections it accepted. Close ends its
// goroutines and connections; the test defers it.
type hostilePeer struct {
	ln       net.Listener
	answer   func(nc net.Conn, req *Command, stop <-chan struct{})
	accepted atomic.Int32
	stop     chan struct{}
	wg       sync.WaitGroup

	mu    sync.Mutex
	conns []net.Conn
}

func newHostilePeer(t *testing.T, answer func(nc net.Conn, req *Command, stop <-chan struct{})) *hostilePeer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &hostilePeer{ln: ln, answer: answer, stop: make(chan struct{})}
	p.wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			p.accepted.Add(1)
			p.mu.Lock()
			p.conns = append(p.conns, nc)
			p.mu.Unlock()
			p.wg.Go(func() { p.serve(nc) })
		}
	})
	return p
}

func (p *hostilePeer) serve(nc net.Conn) {
	fr := NewFrameReader(nc, 0)
	for {
		req, err := fr.Read()
		if err != nil {
			return
		}
		if p.answer != nil {
			p.answer(nc, req, p.stop)
		}
	}
}

func (p *hostilePeer) addr() string { return p.ln.Addr().String() }

func (p *hostilePeer) close() {
	select {
	case <-p.stop:
		return
	default:
	}
	close(p.stop)
	_ = p.ln.Close()
	p.mu.Lock()
	for _, nc := range p.conns {
		_ = nc.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// answerFrame encodes a success answer to req.
func answerFrame(t testing.TB, req *Command, body []byte) []byte {
	resp := NewResponse(req, 0, "late")
	resp.Body = body
	frame, err := EncodeFrame(nil, resp)
	require.NoError(t, err)
	return frame
}

// The four peers of issue 15: each call fails within its timeout (sync and async), the
// connection is closed as stalled, and the next call dials again.
func TestStalledPeer(t *testing.T) {
	defer goleak.VerifyNone(t)
	peers := []struct {
		name   string
		answer func(nc net.Conn, req *Command, stop <-chan struct{})
	}{
		{"accepts and never answers", nil},
		{"half a frame then nothing", func(nc net.Conn, req *Command, _ <-chan struct{}) {
			f := answerFrame(t, req, []byte("0123456789"))
			_, _ = nc.Write(f[:len(f)/2])
		}},
		{"a byte at a time", func(nc net.Conn, req *Command, stop <-chan struct{}) {
			for _, b := range answerFrame(t, req, make([]byte, 64)) {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond): // the test's "second"
				}
				if _, err := nc.Write([]byte{b}); err != nil {
					return
				}
			}
		}},
		{"16 MiB announced, nothing sent", func(nc net.Conn, _ *Command, _ <-chan struct{}) {
			var p [8]byte
			binary.BigEndian.PutUint32(p[:], DefaultMaxFrameSize-4)
			binary.BigEndian.PutUint32(p[4:], 10) // JSON, a 10-byte header
			_, _ = nc.Write(p[:])
		}},
	}
	for _, peer := range peers {
		t.Run(peer.name, func(t *testing.T) {
			p := newHostilePeer(t, peer.answer)
			defer p.close()
			closed := make(chan error, 4)
			c := newClient(t, WithConnHooks(ConnHooks{OnConnClosed: func(_ string, err error) { closed <- err }}))
			defer c.Close()

			const timeout = 300 * time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			_, err := c.Invoke(ctx, p.addr(), NewRequest(codeEcho, nil, nil))
			cancel()
			require.ErrorIs(t, err, context.DeadlineExceeded)
			requireStalled(t, closed)

			done := make(chan error, 1)
			require.NoError(t, c.InvokeAsync(p.addr(), NewRequest(codeEcho, nil, nil), timeout, func(_ *Command, err error) { done <- err }))
			require.ErrorIs(t, waitErr(t, done), ErrTimeout)
			requireStalled(t, closed)
			require.EqualValues(t, 2, p.accepted.Load(), "the second call dialed again")
		})
	}
}

// requireStalled waits for a connection to close and checks it closed as stalled.
func requireStalled(t *testing.T, closed <-chan error) {
	t.Helper()
	err := waitErr(t, closed)
	require.ErrorIs(t, err, ErrStalled)
}

// waitErr waits for an error on ch; a hang fails the test instead of the whole run.
func waitErr(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("nothing happened in 20 s: a goroutine waits for ever")
		return nil
	}
}

// holdingPair starts a Server that holds codeHold requests (sending them to heldCh) and
// a Client with opts that counts its connections' closes. The caller closes both.
func holdingPair(t *testing.T, heldCh chan held, opts ...ClientOption) (*Server, *Client, *atomic.Int32) {
	t.Helper()
	s := startServer(t, WithServerHandler(codeHold, holdHandler(heldCh)))
	closes := new(atomic.Int32)
	c := newClient(t, append(opts, WithConnHooks(ConnHooks{OnConnClosed: func(string, error) { closes.Add(1) }}))...)
	return s, c, closes
}

// A timeout on a connection that answers other calls leaves it open: one call the peer
// drops is not a dead peer.
func TestTimeoutOnALiveConnectionKeepsIt(t *testing.T) {
	defer goleak.VerifyNone(t)
	heldCh := make(chan held, 10)
	s, c, closes := holdingPair(t, heldCh)
	defer s.Close()
	defer c.Close()

	done := make(chan error, 1)
	// 2 s: the echo below must be answered before the timeout, even on a loaded machine.
	require.NoError(t, c.InvokeAsync(s.Addr(), NewRequest(codeHold, nil, nil), 2*time.Second, func(_ *Command, err error) { done <- err }))
	<-heldCh
	_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
	require.NoError(t, err)
	require.ErrorIs(t, waitErr(t, done), ErrTimeout)
	_, err = c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
	require.NoError(t, err)
	require.Zero(t, closes.Load())
}

// Read deadlines check the connection but never cut a quiet one short: a long poll held
// for many read timeouts is answered on the same connection.
func TestLongPollOutlivesReadTimeouts(t *testing.T) {
	defer goleak.VerifyNone(t)
	heldCh := make(chan held, 1)
	s, c, closes := holdingPair(t, heldCh, WithReadTimeout(20*time.Millisecond))
	defer s.Close()
	defer c.Close()

	done := make(chan error, 1)
	require.NoError(t, c.InvokeAsync(s.Addr(), NewRequest(codeHold, nil, nil), 30*time.Second, func(_ *Command, err error) { done <- err }))
	h := <-heldCh
	time.Sleep(300 * time.Millisecond) // the broker holds the pull: 15 read timeouts pass
	require.NoError(t, h.sc.Respond(NewResponse(h.req, 0, "found")))
	require.NoError(t, waitErr(t, done))
	require.Zero(t, closes.Load())
}

// A peer that stops, or trickles, inside a frame nobody asked for (no call pending) is
// disconnected by the read deadline's check, within two read timeouts.
func TestStalledInsideAnUnaskedFrame(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, trickle := range []bool{false, true} {
		t.Run(fmt.Sprintf("trickle=%v", trickle), func(t *testing.T) {
			peer := newRawPeer(t)
			defer peer.close()
			closed := make(chan error, 1)
			c := newClient(t, WithReadTimeout(50*time.Millisecond),
				WithConnHooks(ConnHooks{OnConnClosed: func(_ string, err error) { closed <- err }}))
			defer c.Close()
			require.NoError(t, c.InvokeOneway(context.Background(), peer.addr(), NewRequest(codeEcho, nil, nil)))
			nc := peer.accept(t)
			defer nc.Close()

			frame, err := EncodeFrame(nil, NewRequest(codeNotify, nil, make([]byte, 100)))
			require.NoError(t, err)
			_, err = nc.Write(frame[:20])
			require.NoError(t, err)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			if trickle {
				wg.Go(func() {
					for _, b := range frame[20:] {
						select {
						case <-stop:
							return
						case <-time.After(10 * time.Millisecond):
						}
						if _, err := nc.Write([]byte{b}); err != nil {
							return
						}
					}
				})
			}
			err = waitErr(t, closed)
			close(stop)
			wg.Wait()
			require.ErrorIs(t, err, ErrStalled)
			require.ErrorContains(t, err, "bytes arrived, then nothing more")
		})
	}
}

// Memory held for frames grows with the bytes that arrived, not with the sizes the frames
// announce: 1,000 connections each announcing a 16 MiB answer and sending nothing more
// hold next to nothing (reading at the announced size would hold 16 GB).
func TestAnnouncedFramesReserveNothing(t *testing.T) {
	defer goleak.VerifyNone(t)
	const conns = 1000
	p := newHostilePeer(t, func(nc net.Conn, _ *Command, _ <-chan struct{}) {
		var h [8]byte
		binary.BigEndian.PutUint32(h[:], DefaultMaxFrameSize-4)
		binary.BigEndian.PutUint32(h[4:], 10)
		_, _ = nc.Write(h[:])
	})
	defer p.close()
	var d net.Dialer
	c := newClient(t, WithDialer(func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialContext(ctx, "tcp", p.addr()) // 1,000 addresses, one hostile peer
	}))
	defer c.Close()

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var answered sync.WaitGroup
	for i := range conns {
		answered.Add(1)
		require.NoError(t, c.InvokeAsync(fmt.Sprintf("broker-%d:10911", i), NewRequest(codeEcho, nil, nil), time.Minute,
			func(*Command, error) { answered.Done() }))
	}
	require.Eventually(t, func() bool { return p.accepted.Load() == conns }, 30*time.Second, 10*time.Millisecond)
	time.Sleep(200 * time.Millisecond) // let the announcements arrive and be read
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap grew %d KiB for %d connections announcing 16 MiB each", grown>>10, conns)
	require.Less(t, grown, int64(256<<20), "heap growth")
	require.NoError(t, c.Close())
	answered.Wait() // every call got its callback (ErrClosed)
}

// chunkedReader hands out its data in the sizes of steps, with a timeout error before
// each chunk whose step is odd, as a connection with a read deadline does.
type chunkedReader struct {
	data  []byte
	steps []byte
	k     int
	timed bool
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func (r *chunkedReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	step := 1
	if len(r.steps) > 0 {
		step = int(r.steps[r.k%len(r.steps)])
		r.k++
		if step%2 == 1 && !r.timed {
			r.timed = true
			return 0, timeoutErr{}
		}
		r.timed = false
	}
	n := min(max(step*37, 1), len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// A frame that arrives in pieces with read timeouts in between is read as if it had
// arrived at once, and the buffer held for a large body grows with what arrived.
func TestFrameReaderResumesAfterTimeouts(t *testing.T) {
	body := make([]byte, 3<<20)
	for i := range body {
		body[i] = byte(i)
	}
	cmd := NewRequest(11, Fields{{"k", "v"}}, body)
	frame, err := EncodeFrame(nil, cmd)
	require.NoError(t, err)
	r := &chunkedReader{data: frame, steps: []byte{200, 3, 255, 1, 254}}
	fr := NewFrameReader(r, 0)
	for {
		got, err := fr.Read()
		if isTimeout(err) {
			gotBytes, want, partial := fr.Partial()
			require.True(t, partial || gotBytes == 0)
			if partial {
				require.Equal(t, len(frame), want)
				// What the reader holds for the body is at most twice what arrived, and
				// never more than the first chunk before that.
				require.LessOrEqual(t, cap(fr.part), max(2*gotBytes, frameChunk+frameReadBufferSize))
			}
			continue
		}
		require.NoError(t, err)
		require.Equal(t, cmd, got)
		require.Equal(t, len(body), cap(got.Body), "the last step stops at the body's size")
		break
	}
}
