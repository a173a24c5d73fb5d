package remoting

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// connOwner is what a conn tells its owner (a Client, or a ServerConn).
type connOwner interface {
	// handleRequest is called on the read loop for each request from the peer.
	handleRequest(c *conn, req *Command)
	// badFrame is called on the read loop for a frame that breaks the protocol, just
	// before the conn closes.
	badFrame(c *conn, err *FrameError)
	// connClosing is called once when the conn closed, before its pending calls fail:
	// the owner forgets the conn so that retries do not find it.
	connClosing(c *conn)
	// connClosed is called once after the pending calls failed.
	connClosed(c *conn, err error)
}

// connSettings are a conn's limits.
type connSettings struct {
	maxFrame     int
	writeTimeout time.Duration
	readTimeout  time.Duration // how often reads time out to check for a stall
	idleWork     IdleWork      // work for the read loop between frames; nil: none
	takeover     time.Duration // with idleWork: when a long Run's connection is taken over
}

// maxQueuedBytes bounds the frames waiting for a slow socket: beyond it, sends fail
// instead of growing memory. A single frame is always accepted into an empty queue.
func (s connSettings) maxQueuedBytes() int {
	return max(4*s.maxFrame, 4<<20)
}

// conn is one connection: a read loop that decodes frames and matches responses to
// pending calls by opaque, a write loop that drains a queue of encoded frames with one
// writev per batch, and the table of calls this side sent and still waits for.
//
// Lock order: an owner's mutex may be held while taking conn.mu, never the reverse; the
// owner callbacks are called with conn.mu released.
type conn struct {
	nc       net.Conn
	addr     string
	settings connSettings
	owner    connOwner
	pool     *framePool
	ctx      context.Context // cancelled when the conn closes
	cancel   context.CancelFunc
	isClosed atomic.Bool
	activity atomic.Uint64 // frames sent and received
	received atomic.Uint64 // frames received; written by the read loop only
	bytesIn  atomic.Uint64 // bytes read from the socket, whole frames or not (see timedOut)
	handlers atomic.Int32  // handler calls running for the peer's requests
	lending  atomic.Bool   // a call with a BodySource was sent: responses look for theirs
	swept    uint64        // activity at the owner's last idle sweep; under mu

	mu      sync.Mutex
	closed  bool
	err     error           // why it closed
	pending map[int32]*call // calls this side sent, by opaque
	wq      [][]byte        // frames waiting for the write loop
	wqBytes int
	writing bool          // a goroutine is writing to the socket (the write loop or a sender)
	corked  bool          // the read loop is handling frames: it writes what they queue after
	werr    error         // a sender's write failed: the write loop closes the conn with it
	raw     *rawWriter    // non-blocking writes for senders; nil: the write loop writes all
	wake    chan struct{} // buffered, 1: frames were queued, or a sender's write failed
	done    chan struct{} // closed when the conn closes

	idle *idleLoop // nil without idle work
}

func newConn(parent context.Context, nc net.Conn, addr string, settings connSettings, owner connOwner, pool *framePool) *conn {
	ctx, cancel := context.WithCancel(parent)
	c := &conn{
		nc:       nc,
		addr:     addr,
		settings: settings,
		owner:    owner,
		pool:     pool,
		ctx:      ctx,
		cancel:   cancel,
		pending:  make(map[int32]*call),
		raw:      newRawWriter(nc),
		swept:    ^uint64(0), // never equal to activity before the first sweep saw it
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	if settings.idleWork != nil {
		c.idle = &idleLoop{work: settings.idleWork, takeover: settings.takeover, handOff: c.takeOver}
		c.idle.timer = time.AfterFunc(time.Hour, c.takeOver)
		c.idle.timer.Stop()
	}
	return c
}

// start starts the read and write loops, counted in wg. The owner calls it while holding
// its own lock after checking it is not closed, so wg.Add never races with wg.Wait.
func (c *conn) start(wg *sync.WaitGroup) {
	wg.Add(2)
	go c.readLoop(wg)
	go c.writeLoop(wg)
}

// send queues an encoded frame. With a call, the call is registered under its opaque
// first, so the response cannot arrive before it. It never blocks on the socket.
func (c *conn) send(frame []byte, cl *call) error {
	if len(frame) > c.settings.maxFrame {
		return fmt.Errorf("frame of %d bytes exceeds the maximum frame size %d", len(frame), c.settings.maxFrame)
	}
	c.activity.Add(1)
	c.mu.Lock()
	if c.closed {
		err := &ConnError{Addr: c.addr, Err: c.err}
		c.mu.Unlock()
		return err
	}
	if c.wqBytes > 0 && c.wqBytes+len(frame) > c.settings.maxQueuedBytes() {
		n := c.wqBytes
		c.mu.Unlock()
		return fmt.Errorf("write queue to %s full: %d bytes wait for a slow connection", c.addr, n)
	}
	if cl != nil {
		if _, dup := c.pending[cl.opaque]; dup {
			c.mu.Unlock()
			return fmt.Errorf("opaque %d is already pending on the connection to %s", cl.opaque, c.addr)
		}
		cl.conn.Store(c)
		cl.seen.Store(c.received.Load())
		cl.seenBytes.Store(c.bytesIn.Load())
		c.pending[cl.opaque] = cl
		if cl.bodies != nil && !c.lending.Load() {
			c.lending.Store(true)
		}
	}
	switch {
	case c.corked:
		// The read loop is handling frames (a pull's answer sends the queue's next
		// pull): it writes everything they queue in one write when it is done.
		c.wq = append(c.wq, frame)
		c.wqBytes += len(frame)
		c.mu.Unlock()
	case !c.writing && len(c.wq) == 0 && c.raw != nil:
		// Nobody is writing and nothing waits: write the frame from this goroutine,
		// without blocking, rather than waking the write loop and waiting for it to be
		// scheduled, which on a busy machine takes longer than the write.
		c.writing = true
		c.mu.Unlock()
		c.writeNow(frame, nil)
	default:
		c.wq = append(c.wq, frame)
		c.wqBytes += len(frame)
		c.mu.Unlock()
		c.wakeWriter()
	}
	if cl != nil && cl.done.Load() {
		// Timed out while being registered: drop the entry the timer could not see.
		c.forget(cl)
	}
	return nil
}

// writeNow writes buf (one frame, or frames joined; frames, when not nil, are the
// frames joined into buf) for a goroutine that holds the socket (c.writing set by it),
// without blocking: what the socket does not take at once — a slow or stalled peer —
// is queued at the head of the write queue for the write loop, which waits for it within
// the write timeout. A write error is left to the write loop too, which closes the conn:
// pending calls never fail on a sender's goroutine (an async caller is promised its
// callback runs elsewhere), and no sender ever waits on the network.
func (c *conn) writeNow(buf []byte, frames [][]byte) {
	n, err := c.raw.tryWrite(buf)
	var rest []byte
	if err == nil && n < len(buf) {
		rest = append(c.pool.get(), buf[n:]...)
	}
	if frames == nil {
		c.pool.put(buf)
	}
	for i, f := range frames {
		c.pool.put(f)
		frames[i] = nil
	}
	c.mu.Lock()
	c.writing = false
	if err != nil && c.werr == nil {
		c.werr = err
	}
	if rest != nil && !c.closed {
		c.wq = append(c.wq, nil)
		copy(c.wq[1:], c.wq)
		c.wq[0] = rest
		c.wqBytes += len(rest)
	}
	more := len(c.wq) > 0 || c.werr != nil
	c.mu.Unlock()
	if more {
		c.wakeWriter()
	}
}

// cork makes the frames sent from now on wait in the queue, unwritten, until uncork:
// the read loop corks while it handles the frames it has read, so that the requests
// their handling sends (the next pull of each answered queue) leave in one write.
func (c *conn) cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// uncork ends a cork and writes what was queued, from the read loop and without
// blocking (see writeNow), unless another goroutine is writing (it leaves the rest to the
// write loop). The read loop uncorks before it waits for the stream, so nothing it
// queued waits for the next frame. joined is the read loop's scratch buffer.
func (c *conn) uncork(batch *[][]byte, joined *[]byte) {
	c.mu.Lock()
	c.corked = false
	if c.writing || len(c.wq) == 0 || c.closed || c.raw == nil {
		more := len(c.wq) > 0
		c.mu.Unlock()
		if more {
			c.wakeWriter()
		}
		return
	}
	*batch, c.wq = c.wq, (*batch)[:0]
	c.wqBytes = 0
	c.writing = true
	c.mu.Unlock()
	if len(*batch) == 1 {
		c.writeNow((*batch)[0], nil)
		(*batch)[0] = nil
		return
	}
	*joined = (*joined)[:0]
	for _, f := range *batch {
		*joined = append(*joined, f...)
	}
	c.writeNow(*joined, *batch)
	if cap(*joined) > framePoolMaxCap {
		*joined = nil
	}
}

func (c *conn) wakeWriter() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// forget removes cl from the pending table, if it is still there.
func (c *conn) forget(cl *call) {
	c.mu.Lock()
	if c.pending[cl.opaque] == cl {
		delete(c.pending, cl.opaque)
	}
	c.mu.Unlock()
}

// respond sends resp as the answer to req: req's opaque and serialization, the response
// flag. A response that cannot be encoded or is too large is replaced by SYSTEM_ERROR
// with a remark saying why, so the peer is not left waiting. A send failure (the
// connection closed or is overloaded) is dropped: there is no one left to tell.
func (c *conn) respond(req, resp *Command) {
	resp.Opaque = req.Opaque
	resp.Flag = (resp.Flag | FlagResponse) &^ FlagOneway
	resp.Serialize = req.Serialize
	buf := c.pool.get()
	frame, err := appendFrame(buf, resp)
	if err == nil && len(frame) > c.settings.maxFrame {
		err = fmt.Errorf("response of %d bytes exceeds the maximum frame size %d", len(frame), c.settings.maxFrame)
	}
	if err != nil {
		fallback := NewResponse(req, codeSystemError, "remoting: cannot send response code "+fmt.Sprint(resp.Code)+": "+errString(err))
		if frame, err = appendFrame(frame[:0], fallback); err != nil {
			c.pool.put(frame)
			return
		}
	}
	if err := c.send(frame, nil); err != nil {
		c.pool.put(frame)
	}
}

// close closes the conn once: it stops both loops, closes the socket, tells the owner,
// fails every pending call with a *ConnError naming the address and cause, and tells the
// owner again. It runs on whichever goroutine saw the failure first.
func (c *conn) close(cause error) { c.closeWhen(cause, nil) }

// closeWhen is close if cond, called under mu, holds (or is nil).
func (c *conn) closeWhen(cause error, cond func() bool) {
	c.mu.Lock()
	if c.closed || (cond != nil && !cond()) {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.isClosed.Store(true)
	c.err = cause
	pending := c.pending
	c.pending = nil
	c.wq = nil
	c.wqBytes = 0
	close(c.done)
	c.mu.Unlock()

	if c.idle != nil {
		c.idle.timer.Stop()
		c.takeOver() // a Run in progress: the Client must not wait for it
	}
	c.cancel()
	_ = c.nc.Close() // the cause is what matters; a second close error adds nothing
	c.owner.connClosing(c)
	if len(pending) > 0 {
		ce := &ConnError{Addr: c.addr, Err: cause}
		for _, cl := range pending {
			cl.complete(nil, ce)
		}
	}
	c.owner.connClosed(c, cause)
}

// closeErr returns why the conn closed, or nil while it is open.
func (c *conn) closeErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *conn) readLoop(wg *sync.WaitGroup) {
	st := &readState{fr: NewFrameReader(countingReader{r: c.nc, n: &c.bytesIn}, c.settings.maxFrame), wg: wg}
	st.fr.bodyFor = c.lentBody
	if err := c.armReadDeadline(); err != nil {
		c.close(err)
		wg.Done()
		return
	}
	c.read(st)
}

// read is the read loop from st on: readLoop starts it, and a goroutine taking the loop
// over from one running idle work goes on with it (see IdleWork). It ends when the
// connection fails or closes, or when another goroutine took the loop over.
func (c *conn) read(st *readState) {
	fr := st.fr
	var err error
	for err == nil {
		if !fr.Ready() { // about to wait for the stream
			if st.corked {
				c.uncork(&st.batch, &st.joined)
				st.corked = false
			}
			if !st.fresh && !c.runIdle(st) {
				return // another goroutine reads now
			}
		}
		var cmd *Command
		cmd, err = fr.Read()
		st.fresh = false
		if isTimeout(err) {
			err = c.checkStall(fr, &st.stall)
			continue
		}
		if err != nil {
			var fe *FrameError
			switch {
			case errors.As(err, &fe):
				fe.Addr = c.addr
				if !c.isClosed.Load() {
					c.owner.badFrame(c, fe)
				}
			case isPeerClose(err):
				err = c.peerClosed(err, st.frames)
			}
			break
		}
		st.frames++
		c.activity.Add(1)
		c.received.Store(st.frames)
		if !st.corked {
			c.cork()
			st.corked = true
		}
		if cmd.IsResponse() {
			c.mu.Lock()
			cl := c.pending[cmd.Opaque]
			if cl != nil {
				delete(c.pending, cmd.Opaque)
			}
			c.mu.Unlock()
			if cl != nil {
				cl.complete(cmd, nil)
			}
			// A response nobody waits for (its call timed out) is dropped.
			continue
		}
		c.owner.handleRequest(c, cmd)
	}
	c.close(err)
	st.wg.Done()
}

// lentBody is the read loop's FrameReader.bodyFor: the buffer the BodySource of the call
// cmd answers lends for its body of n bytes, or nil. The call stays pending: the
// response completes it once its body is read, as any other.
func (c *conn) lentBody(cmd *Command, n int) []byte {
	if !c.lending.Load() || !cmd.IsResponse() {
		return nil
	}
	c.mu.Lock()
	cl := c.pending[cmd.Opaque]
	c.mu.Unlock()
	if cl == nil || cl.bodies == nil {
		return nil
	}
	return cl.bodies.Body(n)
}

func (c *conn) writeLoop(wg *sync.WaitGroup) {
	defer wg.Done()
	var batch, iov [][]byte
	var joined []byte
	for {
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
		c.mu.Lock()
		if werr := c.werr; werr != nil {
			c.mu.Unlock()
			c.close(werr)
			return
		}
		if c.writing || len(c.wq) == 0 {
			// A sender is writing; it wakes the loop again if frames are left.
			c.mu.Unlock()
			continue
		}
		batch, c.wq = c.wq, batch[:0]
		c.wqBytes = 0
		c.writing = true
		c.mu.Unlock()
		if err := c.nc.SetWriteDeadline(time.Now().Add(c.settings.writeTimeout)); err != nil {
			c.close(fmt.Errorf("set write deadline: %w", err))
			return
		}
		err := c.writeBatch(batch, &iov, &joined)
		for i, b := range batch {
			c.pool.put(b)
			batch[i] = nil
		}
		if err == nil {
			// A deadline left set would fail later writes once it passed: the senders'
			// on TCP, and on TLS the reply tls.Conn.Read writes itself (to a KeyUpdate).
			err = c.nc.SetWriteDeadline(time.Time{})
		}
		if err != nil {
			c.close(err)
			return
		}
		c.mu.Lock()
		c.writing = false
		if len(c.wq) > 0 {
			c.wakeWriter() // queued while the batch was written
		}
		c.mu.Unlock()
	}
}

// writeBatch writes frames with one write: writev on a TCP connection; joined into one
// buffer on TLS and other wrapped connections, which write each buffer separately (one
// batch is then one write, and one TLS record where it fits). iov and joined are the
// caller's scratch.
func (c *conn) writeBatch(batch [][]byte, iov *[][]byte, joined *[]byte) error {
	_, writev := c.nc.(interface{ SetNoDelay(bool) error }) // *net.TCPConn: net.Buffers uses writev
	var err error
	if writev || len(batch) == 1 {
		*iov = append((*iov)[:0], batch...) // WriteTo consumes its slice; keep batch intact
		bufs := net.Buffers(*iov)
		_, err = bufs.WriteTo(c.nc)
		clear(*iov)
	} else {
		*joined = (*joined)[:0]
		for _, b := range batch {
			*joined = append(*joined, b...)
		}
		_, err = c.nc.Write(*joined)
		if cap(*joined) > framePoolMaxCap {
			*joined = nil
		}
	}
	return err
}

// closeIfIdle closes c if it carried no frame since the previous call, waits for no
// answer and runs no handler. The check and the close are one critical section, and
// send counts its frame before taking mu: a frame being sent keeps c open, and a send
// that comes later finds c closed and fails with a *ConnError. Only the owner's idle
// sweep calls it, one call at a time.
func (c *conn) closeIfIdle() {
	c.closeWhen(errIdle, func() bool {
		n := c.activity.Load()
		idle := n == c.swept && len(c.pending) == 0 && c.handlers.Load() == 0
		c.swept = n
		return idle
	})
}
