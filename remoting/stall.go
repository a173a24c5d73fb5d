package remoting

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// ErrStalled is wrapped by the *ConnError of a connection closed because its peer
// stopped answering: a call timed out, nothing at all had arrived on the connection since
// the call was sent, and nothing of ours was waiting to be written (a peer that accepts
// and never answers, or holds everything), or a frame began arriving and was still
// incomplete a read timeout later (a peer that stops or trickles inside a frame). The
// calls pending on it fail with that error and the next call dials again.
var ErrStalled = errors.New("remoting: peer stalled")

// DefaultReadTimeout is how often a connection's reads time out to check for a peer
// stalled inside a frame (WithReadTimeout).
const DefaultReadTimeout = 10 * time.Second

// stallCheck is what the read loop saw at its previous read deadline.
type stallCheck struct {
	frames  uint64 // frames read
	partial bool   // a frame was arriving
}

// armReadDeadline sets the next read deadline, when the read loop checks the connection
// (see checkStall).
func (c *conn) armReadDeadline() error {
	return c.nc.SetReadDeadline(time.Now().Add(c.settings.readTimeout))
}

// checkStall runs on the read loop when a read deadline passed. The deadline is a
// check, not a limit on silence: between frames a connection may be quiet for as long
// as its peer likes (a broker holds a long poll for its suspend time; the calls' own
// timeouts bound how long they wait, see timedOut). It fails only when a frame that was
// arriving at the previous check has not arrived in full since: the peer stopped, or
// trickles, inside a frame. Otherwise it arms the next deadline.
func (c *conn) checkStall(fr *FrameReader, prev *stallCheck) error {
	got, want, partial := fr.Partial()
	frames := c.received.Load()
	if partial && prev.partial && frames == prev.frames {
		return fmt.Errorf("%w: %d of a frame's %d bytes arrived, then nothing more for over %v", ErrStalled, got, want, c.settings.readTimeout)
	}
	*prev = stallCheck{frames: frames, partial: partial}
	if err := c.armReadDeadline(); err != nil {
		return fmt.Errorf("set read deadline: %w", err)
	}
	return nil
}

// streamingBytes is how much of a frame in progress must arrive while a call waits for
// the connection to count as answering (see timedOut): a read buffer's worth. A peer
// streaming a large answer delivers that in milliseconds; one that trickles a byte at
// a time does not.
const streamingBytes = frameReadBufferSize

// timedOut is told that cl, sent on c, got no answer within its timeout (after). When
// no frame arrived on c since cl was sent, nor streamingBytes of one, and nothing of
// ours waits to be written (cl's own frame may be behind a backlog the peer is still
// reading), the peer is not answering anything on it: c closes, failing the other calls
// waiting on it, so the next call dials again instead of waiting on a dead peer too
// (Java closes a channel on any synchronous call's timeout). A connection that answers
// other calls, or streams a large answer, is kept; one that stops reading is closed by
// the write timeout.
func (c *conn) timedOut(cl *call, after time.Duration) {
	if c.received.Load() != cl.seen.Load() || c.bytesIn.Load()-cl.seenBytes.Load() >= streamingBytes || c.writesPending() {
		return
	}
	c.close(fmt.Errorf("%w: no frame arrived in the %v after request code %d (opaque %d) was sent", ErrStalled, after, cl.code, cl.opaque))
}

// writesPending reports whether frames wait to be written, or are being written.
func (c *conn) writesPending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.wq) > 0 || c.writing
}

// countingReader counts the bytes read through it into n, which timedOut reads from
// other goroutines: any progress, even inside a large frame, shows the peer answering.
type countingReader struct {
	r io.Reader
	n *atomic.Uint64
}

func (cr countingReader) Read(p []byte) (int, error) {
	k, err := cr.r.Read(p)
	cr.n.Add(uint64(k))
	return k, err
}
