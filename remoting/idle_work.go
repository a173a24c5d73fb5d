package remoting

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// IdleWork is work a Client's connections do on their read loops in the gaps between
// frames: when a read loop has handled every frame it has read and would wait for the
// next, it asks Pending and, when there is work, calls Run before it waits. A consumer
// runs its quick listener calls there: the read loop that just queued them runs them
// itself instead of waking a worker goroutine, which on a small machine costs more than
// the calls (a thread wake-up on the other core and, with a busy peer process, the
// peer's CPU).
//
// Run may run for long: when it has not returned within the takeover delay, another
// goroutine takes the connection's reading over, so responses and requests keep being
// read (it reads before it does any idle work itself); the goroutine running Run then
// ends when Run returns. So Run may be called concurrently: by the read loops of
// different connections, and on one connection by the goroutine that took it over. From the takeover on, or
// from the connection's close, that goroutine is not the Client's any more (Close does
// not wait for it): Run's owner waits for the work it runs.
type IdleWork interface {
	// Pending reports whether Run has work. It is called whenever a read loop runs out of
	// frames, so it must be cheap: an atomic load, not a lock.
	Pending() bool
	// Run does the work, on the calling read loop's goroutine. Before it does anything
	// that may wait on the network (a synchronous call, say, whose answer comes on this
	// very connection), it calls handOff: another goroutine then reads the connection at
	// once, as after the takeover delay, and the caller's goroutine ends when Run
	// returns. handOff may be called more than once.
	Run(handOff func())
}

// WithIdleWork makes the Client's connections do w in the gaps between frames (see
// IdleWork), taking a connection's reading over when Run has not returned within
// takeover (positive; a millisecond is a good value: the longest a connection's
// frames wait for a Run that turned slow).
func WithIdleWork(w IdleWork, takeover time.Duration) ClientOption {
	return func(c *clientConfig) {
		switch {
		case w == nil:
			c.errs = append(c.errs, errors.New("remoting: WithIdleWork(nil): work must not be nil"))
		case takeover <= 0:
			c.errs = append(c.errs, fmt.Errorf("remoting: WithIdleWork(%v): the takeover delay must be positive", takeover))
		default:
			c.idleWork, c.takeover = w, takeover
		}
	}
}

// readState is a read loop's state, handed to the goroutine that takes the loop over.
type readState struct {
	fr     *FrameReader
	batch  [][]byte // for uncork's writes
	joined []byte
	stall  stallCheck
	corked bool
	frames uint64
	fresh  bool // the goroutine took the loop over and has not read yet

	wg *sync.WaitGroup // counts the loop: its goroutine calls Done when the loop ends
}

// idleLoop is what a conn needs to run idle work on its read loop and hand the loop
// over when the work runs long.
type idleLoop struct {
	work     IdleWork
	takeover time.Duration
	timer    *time.Timer // fires takeOver; armed while Run runs
	handOff  func()      // takeOver, for Run to call
	st       *readState  // the loop's state, for the goroutine taking over
	// phase is the loop's generation << 1 | 1 while Run runs on it: a takeover moves it
	// to the next generation, so the goroutine whose Run returns late cannot mistake
	// its successor's Run for its own.
	phase atomic.Uint64
}

// runIdle runs the idle work, if any is pending, from the read loop at a point where
// it handled every frame it read. It returns false when the loop was taken over
// meanwhile: the caller then ends at once, without touching st, and without Done (the
// loop's count in wg went with the loop).
func (c *conn) runIdle(st *readState) bool {
	il := c.idle
	if il == nil || c.isClosed.Load() || !il.work.Pending() {
		return true
	}
	il.st = st
	running := il.phase.Load() | 1
	il.phase.Store(running)
	il.timer.Reset(il.takeover)
	il.work.Run(il.handOff)
	if !il.phase.CompareAndSwap(running, running&^1) {
		return false // taken over
	}
	il.timer.Stop()
	return true
}

// takeOver starts a goroutine that goes on with the read loop, if the loop is running
// idle work: the takeover timer calls it, and close does (the new goroutine finds the
// connection closed, and ends the loop). A late fire of the timer can take over a later
// Run early, which is harmless.
func (c *conn) takeOver() {
	il := c.idle
	for {
		p := il.phase.Load()
		if p&1 == 0 {
			return // reading: nothing to take over
		}
		if il.phase.CompareAndSwap(p, (p|1)+1) { // next generation, reading
			// The new goroutine reads before it runs idle work: work that is pending
			// again, and long again, must not keep the connection from being read.
			il.st.fresh = true
			go c.read(il.st)
			return
		}
	}
}
