package fakebroker

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/remoting"
)

// AnyCode makes a Fault apply to requests of every code the server handles.
const AnyCode int32 = -1

// Fault describes what to do, instead of the normal handling, with requests of one code
// that reach a broker or the name server. Give one action: Drop, Fail, or Delay (Delay
// may be combined with Fail: fail after the delay). Times and For bound how long it
// lasts; with neither it lasts until Injection.Remove or ClearFaults.
//
//	b.Inject(fakebroker.Fault{Code: fakebroker.RequestPullMessage, Fail: fakebroker.ResponseSystemBusy, Times: 3})
//
// Faults apply to the request codes the server handles (see the package doc); other codes
// are answered REQUEST_CODE_NOT_SUPPORTED by the transport before any fault is looked at.
// Every request a fault catches is still counted by Requests.
type Fault struct {
	// Code is the request code, or AnyCode.
	Code int32
	// Drop swallows the request: it is neither handled nor answered.
	Drop bool
	// Fail answers the request with this response code (and Remark) without handling it.
	// A oneway request is swallowed instead.
	Fail int32
	// Remark is the remark of a Fail answer; empty means "fakebroker: injected fault".
	Remark string
	// Delay handles (or fails) the request this much later than it arrived. Later
	// requests of the same connection are not held up behind it.
	Delay time.Duration
	// Times limits the fault to this many requests; 0 means no limit.
	Times int
	// For limits the fault to this long from Inject; 0 means no limit.
	For time.Duration
}

func (f Fault) validate() error {
	actions := 0
	if f.Drop {
		actions++
	}
	if f.Fail != 0 {
		actions++
	}
	switch {
	case actions > 1:
		return errors.New("fakebroker: Fault: Drop and Fail cannot be combined")
	case actions == 0 && f.Delay <= 0:
		return errors.New("fakebroker: Fault: no action (set Drop, Fail or Delay)")
	case f.Delay < 0 || f.Times < 0 || f.For < 0:
		return fmt.Errorf("fakebroker: Fault: negative Delay (%v), Times (%d) or For (%v)", f.Delay, f.Times, f.For)
	case f.Drop && f.Delay > 0:
		return errors.New("fakebroker: Fault: Drop with a Delay means nothing; use Drop alone")
	case f.Code < AnyCode:
		return fmt.Errorf("fakebroker: Fault: Code %d is not a request code (or AnyCode)", f.Code)
	}
	return nil
}

// Injection is a fault in force. Its methods are safe for concurrent use.
type Injection struct {
	ep    *endpoint
	fault Fault
	until time.Time // zero: no end

	mu      sync.Mutex
	hits    int
	removed bool
}

// Hits returns how many requests the fault has caught so far.
func (in *Injection) Hits() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.hits
}

// Remove ends the fault; requests already delayed by it are still handled later.
func (in *Injection) Remove() {
	in.mu.Lock()
	in.removed = true
	in.mu.Unlock()
	in.ep.removeFault(in)
}

// take reports whether the fault catches one more request now, counting it.
func (in *Injection) take(code int32, now time.Time) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.removed || (in.fault.Code != AnyCode && in.fault.Code != code) {
		return false
	}
	if !in.until.IsZero() && !now.Before(in.until) {
		return false
	}
	if in.fault.Times > 0 && in.hits >= in.fault.Times {
		return false
	}
	in.hits++
	return true
}

// spent reports whether the fault can catch nothing more.
func (in *Injection) spent(now time.Time) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.removed || (in.fault.Times > 0 && in.hits >= in.fault.Times) ||
		(!in.until.IsZero() && !now.Before(in.until))
}

// apply does what the fault says with req; h is the normal handler.
func (in *Injection) apply(sc conn, req *remoting.Command, h handler) *remoting.Command {
	f := in.fault
	switch {
	case f.Drop:
		return nil
	case f.Delay > 0:
		gen := in.ep.generation()
		in.ep.sched.after(f.Delay, func() {
			if in.ep.generation() != gen || !in.ep.isRunning() {
				return // the server stopped: the connection is gone
			}
			var resp *remoting.Command
			if f.Fail != 0 {
				resp = in.failResponse(req)
			} else {
				resp = h(sc, req)
			}
			if resp != nil && !req.IsOneway() {
				in.ep.respond(sc, resp)
			}
		})
		return nil
	default:
		return in.failResponse(req)
	}
}

func (in *Injection) failResponse(req *remoting.Command) *remoting.Command {
	remark := in.fault.Remark
	if remark == "" {
		remark = "fakebroker: injected fault"
	}
	return newResponse(req, in.fault.Fail, remark)
}
