package remoting

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// recordingSource lends buffers of its own and remembers each, by the size asked for.
// With refuse it lends nothing; with short it lends buffers one byte too short.
type recordingSource struct {
	mu      sync.Mutex
	lent    [][]byte
	refuse  bool
	short   bool
	callers int
}

func (s *recordingSource) Body(n int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.callers++
	switch {
	case s.refuse:
		return nil
	case s.short:
		return make([]byte, n-1)
	}
	b := make([]byte, n, n+7)
	for i := range b {
		b[i] = 0xEE // what the body must overwrite
	}
	s.lent = append(s.lent, b)
	return b
}

// A call made with InvokeAsyncInto gets its response's body in the buffer its source
// lends, whole and equal to what was sent, whatever its size against the read buffer;
// an empty body asks for no buffer.
func TestInvokeAsyncIntoReadsTheBodyIntoTheLentBuffer(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServer(t)
	defer s.Close()
	c := newClient(t)
	defer c.Close()

	for _, size := range []int{0, 1, 300, frameReadBufferSize - 100, frameReadBufferSize + 1, 3 * frameChunk} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			body := make([]byte, size)
			for i := range body {
				body[i] = byte(i * 7)
			}
			src := &recordingSource{}
			resp := invokeInto(t, c, s.Addr(), body, src)
			require.True(t, bytes.Equal(body, resp.Body), "body read whole")
			if size == 0 {
				require.Zero(t, src.callers, "no buffer asked for an empty body")
				return
			}
			require.Len(t, src.lent, 1)
			require.Same(t, &src.lent[0][0], &resp.Body[0], "the body is the lent buffer")
			require.Equal(t, cap(src.lent[0]), cap(resp.Body), "with the capacity it was lent with")
		})
	}
}

// A source that lends nothing, or a buffer of the wrong length, leaves the body to the
// usual allocation.
func TestInvokeAsyncIntoFallsBackToAllocating(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServer(t)
	defer s.Close()
	c := newClient(t)
	defer c.Close()
	body := bytes.Repeat([]byte("lend"), 5000)
	for _, src := range []*recordingSource{{refuse: true}, {short: true}} {
		resp := invokeInto(t, c, s.Addr(), body, src)
		require.Equal(t, body, resp.Body)
		require.Equal(t, 1, src.callers)
	}
}

// Calls with and without sources, interleaved on one connection: each source is asked
// for its own call's body only, and every body arrives intact.
func TestInvokeAsyncIntoAmongOtherCalls(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServer(t)
	defer s.Close()
	c := newClient(t)
	defer c.Close()

	const n = 100
	errs := make(chan error, n)
	srcs := make([]*recordingSource, n)
	for i := range n {
		body := bytes.Repeat([]byte{byte(i)}, 100+i*97)
		check := func(resp *Command, err error) {
			if err == nil && !bytes.Equal(resp.Body, body) {
				err = fmt.Errorf("call %d: body of %d bytes differs", i, len(resp.Body))
			}
			errs <- err
		}
		req := NewRequest(codeEcho, nil, body)
		if i%2 == 0 {
			srcs[i] = &recordingSource{}
			require.NoError(t, c.InvokeAsyncInto(s.Addr(), req, time.Minute, srcs[i], check))
		} else {
			require.NoError(t, c.InvokeAsync(s.Addr(), req, time.Minute, check))
		}
	}
	for range n {
		require.NoError(t, <-errs)
	}
	for i, src := range srcs {
		if src != nil {
			require.Equal(t, 1, src.callers, "call %d's source", i)
		}
	}
}

// invokeInto echoes body through InvokeAsyncInto with src and returns the response.
func invokeInto(t *testing.T, c *Client, addr string, body []byte, src BodySource) *Command {
	t.Helper()
	type result struct {
		resp *Command
		err  error
	}
	done := make(chan result, 1)
	require.NoError(t, c.InvokeAsyncInto(addr, NewRequest(codeEcho, nil, body), time.Minute, src,
		func(resp *Command, err error) { done <- result{resp, err} }))
	r := <-done
	require.NoError(t, r.err)
	return r.resp
}

// A lent buffer is asked for once per body, even when the body arrives in pieces with
// read timeouts in between, and holds the whole body once Read returns it.
func TestFrameReaderLentBodyResumesAfterTimeouts(t *testing.T) {
	body := make([]byte, 3*frameReadBufferSize+5)
	for i := range body {
		body[i] = byte(i % 251)
	}
	resp := &Command{Code: 0, Opaque: 9, Flag: FlagResponse, Body: body}
	frame, err := EncodeFrame(nil, resp)
	require.NoError(t, err)

	var asked []int
	var lent []byte
	fr := NewFrameReader(&chunkedReader{data: frame, steps: []byte{1, 2, 3, 200, 5}}, 0)
	fr.bodyFor = func(cmd *Command, n int) []byte {
		require.Equal(t, int32(9), cmd.Opaque, "asked once the header is decoded")
		asked = append(asked, n)
		lent = make([]byte, n)
		return lent
	}
	var got *Command
	for got == nil {
		got, err = fr.Read()
		if isTimeout(err) {
			continue
		}
		require.NoError(t, err)
	}
	require.Equal(t, []int{len(body)}, asked)
	require.Equal(t, body, got.Body)
	require.Same(t, &lent[0], &got.Body[0])
	_, err = fr.Read()
	require.True(t, errors.Is(err, io.EOF))
}

// A stream that ends inside a lent body is an error like any other, and the reader
// lets go of the lent buffer.
func TestFrameReaderLentBodyCutShort(t *testing.T) {
	frame, err := EncodeFrame(nil, &Command{Opaque: 3, Flag: FlagResponse, Body: make([]byte, 5000)})
	require.NoError(t, err)
	fr := NewFrameReader(bytes.NewReader(frame[:len(frame)-10]), 0)
	asked := 0
	fr.bodyFor = func(_ *Command, n int) []byte { asked++; return make([]byte, n) }
	_, err = fr.Read()
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.Equal(t, 1, asked)
	require.Nil(t, fr.lent, "the lent buffer is let go")
	require.Nil(t, fr.part)
}

// A call that times out after its response's header arrived, its body still coming,
// fails once with ErrTimeout; the buffer lent at the header is never handed to anyone
// else (no second callback). When the body was streaming (more than a read buffer of it
// had arrived) the connection is kept, the rest of the body is read into that buffer
// and dropped, and the next call gets its own response on the same connection; when
// only a few bytes had arrived the peer counts as stalled: the connection closes and
// the next call dials again.
func TestInvokeAsyncIntoTimesOutBetweenHeaderAndBody(t *testing.T) {
	for _, tc := range []struct {
		name         string
		size, before int // the body's size, and how much of it comes before the timeout
		kept         bool
	}{
		{"streaming", 100 << 10, streamingBytes + 4096, true},
		{"stalled", 5000, 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			body := bytes.Repeat([]byte{'b'}, tc.size)
			timedOut := make(chan struct{})
			var answers atomic.Int32
			p := newHostilePeer(t, func(nc net.Conn, req *Command, stop <-chan struct{}) {
				f := answerFrame(t, req, body)
				if answers.Add(1) > 1 {
					_, _ = nc.Write(f)
					return
				}
				cut := len(f) - len(body) + tc.before // the header and the body's first bytes
				_, _ = nc.Write(f[:cut])
				select {
				case <-timedOut:
				case <-stop:
					return
				}
				_, _ = nc.Write(f[cut:])
			})
			defer p.close()
			closed := make(chan error, 2)
			c := newClient(t, WithConnHooks(ConnHooks{OnConnClosed: func(_ string, err error) { closed <- err }}))
			defer c.Close()

			src := &recordingSource{}
			results := make(chan error, 2)
			require.NoError(t, c.InvokeAsyncInto(p.addr(), NewRequest(codeEcho, nil, nil), 300*time.Millisecond, src,
				func(_ *Command, err error) { results <- err }))
			require.ErrorIs(t, waitErr(t, results), ErrTimeout)
			if !tc.kept {
				requireStalled(t, closed)
			}
			close(timedOut)

			resp := invokeInto(t, c, p.addr(), nil, &recordingSource{})
			require.Equal(t, body, resp.Body)
			require.Equal(t, 1, src.callers, "the first call's buffer was lent once, at its header")
			want := int32(2) // the stalled connection and the next one
			if tc.kept {
				require.Empty(t, closed, "the connection answering is kept")
				require.Equal(t, body, src.lent[0], "the late body read into its lent buffer, before the next frame")
				want = 1
			}
			require.Equal(t, want, p.accepted.Load(), "connections dialled")
			select {
			case err := <-results:
				t.Fatalf("a second callback for the timed-out call: %v", err)
			case <-time.After(50 * time.Millisecond):
			}
		})
	}
}
