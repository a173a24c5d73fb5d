package remoting

import (
	"errors"
	"fmt"
	"time"
)

// ErrStalled is wrapped by the *ConnError of a connection closed because its peer
// stopped answering: a call timed out and no frame had arrived on the connection since
// the call was sent (a peer that accepts and never answers, or holds everything), or a
// frame began arriving and was still incomplete a read timeout later (a peer that stops
// or trickles inside a frame). The calls pending on it fail with that error and the next
// call dials again.
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

// timedOut is told that cl, sent on c, got no answer within its timeout (after). When
// no frame at all arrived on c since cl was sent, the peer is not answering anything
// on it: c closes, failing the other calls waiting on it, so the next call dials again
// instead of waiting on a dead peer too (Java closes a channel on any synchronous call's
// timeout; a connection that answers other calls is kept here).
func (c *conn) timedOut(cl *call, after time.Duration) {
	if c.received.Load() != cl.seen.Load() {
		return
	}
	c.close(fmt.Errorf("%w: no frame arrived in the %v after request code %d (opaque %d) was sent", ErrStalled, after, cl.code, cl.opaque))
}
