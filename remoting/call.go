package remoting

import (
	"sync"
	"sync/atomic"
	"time"
)

// call is one request waiting for its response. It completes exactly once: whoever wins
// the done flag (the read loop with the response, the timeout timer, the connection's
// close, or a sync caller whose ctx ended) delivers the result.
type call struct {
	addr   string
	code   int32
	opaque int32
	req    *Command
	hooks  []RPCHook // AfterResponse hooks; shared, read only

	ch     chan callResult       // a sync call's result (buffered, 1)
	cb     func(*Command, error) // an async call's callback
	bodies BodySource            // lends the buffer the response's body is read into; nil: none

	done  atomic.Bool
	timer atomic.Pointer[time.Timer]
	conn  atomic.Pointer[conn] // the connection it was registered on
	seen  atomic.Uint64        // the frames that connection had received then
	// seenBytes is the bytes that connection had read then.
	seenBytes atomic.Uint64
}

type callResult struct {
	resp *Command
	err  error
}

func newCall(addr string, req *Command, hooks []RPCHook) *call {
	return &call{addr: addr, code: req.Code, opaque: req.Opaque, req: req, hooks: hooks}
}

// complete delivers the result if the call was not completed yet. It reports whether it
// did.
func (cl *call) complete(resp *Command, err error) bool {
	if !cl.done.CompareAndSwap(false, true) {
		return false
	}
	cl.finish(resp, err)
	return true
}

// finish delivers the result; the caller has won the done flag.
func (cl *call) finish(resp *Command, err error) {
	if t := cl.timer.Load(); t != nil {
		t.Stop()
	}
	if err != nil {
		err = cl.wrap(err)
		resp = nil
	} else {
		for _, h := range cl.hooks {
			h.AfterResponse(cl.addr, cl.req, resp)
		}
	}
	if cl.cb != nil {
		cl.cb(resp, err)
		return
	}
	cl.ch <- callResult{resp: resp, err: err}
}

// wrap names the call in err.
func (cl *call) wrap(err error) error {
	return &CallError{Addr: cl.addr, Code: cl.code, Opaque: cl.opaque, Err: err}
}

// framePool recycles frame buffers between the goroutines that encode frames and the
// write loops that send them. One pool belongs to one Client or Server.
type framePool struct {
	mu   sync.Mutex
	free [][]byte
}

const (
	framePoolMaxBuffers = 64
	framePoolMaxCap     = 64 << 10
	framePoolNewCap     = 512
)

func (p *framePool) get() []byte {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return b[:0]
	}
	p.mu.Unlock()
	return make([]byte, 0, framePoolNewCap)
}

func (p *framePool) put(b []byte) {
	if cap(b) == 0 || cap(b) > framePoolMaxCap {
		return
	}
	p.mu.Lock()
	if len(p.free) < framePoolMaxBuffers {
		p.free = append(p.free, b)
	}
	p.mu.Unlock()
}
