package remoting

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrClosed is returned, wrapped, by calls on a Client, Server or connection that was
// closed, and it fails the calls that were pending when Close ran.
var ErrClosed = errors.New("remoting: closed")

// ErrTimeout is wrapped by the error an asynchronous call's callback gets when no response
// arrived within the call's timeout. That error also matches context.DeadlineExceeded.
var ErrTimeout = errors.New("remoting: request timed out")

// CallError is the error of one request: where it went, its code and opaque, and why it
// failed. Err is a *ConnError when the connection failed or could not be made, ErrClosed,
// a timeout (errors.Is(err, ErrTimeout)), the caller's ctx.Err(), or an encoding error.
type CallError struct {
	Addr   string // the peer address
	Code   int32  // the request code
	Opaque int32  // the request's opaque; 0 if it was never assigned
	Err    error  // the cause
}

// Error names the address, the request code and opaque, and the cause.
func (e *CallError) Error() string {
	cause := "<nil>"
	if ce, ok := e.Err.(*ConnError); ok && ce.Addr == e.Addr {
		cause = "connection: " + errString(ce.Err)
	} else if e.Err != nil {
		cause = strings.TrimPrefix(e.Err.Error(), "remoting: ")
	}
	return fmt.Sprintf("remoting: request code %d (opaque %d) to %s: %s", e.Code, e.Opaque, e.Addr, cause)
}

// Unwrap returns the cause.
func (e *CallError) Unwrap() error { return e.Err }

// ConnError is a failed or lost connection: dialing failed, or the connection broke (read
// or write error, peer close, bad frame) or was closed.
type ConnError struct {
	Addr string // the peer address
	Err  error  // the cause
	dial bool   // the connection could not be made
}

// Dialing reports whether the connection could not be made at all, so that nothing of
// a call that failed with e reached the peer (unlike a connection lost after the call
// was written, whose request the peer may still process).
func (e *ConnError) Dialing() bool { return e.dial }

// Error names the address and the cause.
func (e *ConnError) Error() string {
	return "remoting: connection to " + e.Addr + ": " + errString(e.Err)
}

// Unwrap returns the cause.
func (e *ConnError) Unwrap() error { return e.Err }

// FrameError is a frame that breaks the protocol: a length out of range, an unknown header
// serialization, or a header that does not decode. The connection it arrived on is closed.
type FrameError struct {
	Addr string // the peer address; empty when the frame was not read from a connection
	Err  error  // what was wrong
}

// Error names the address, if known, and what was wrong.
func (e *FrameError) Error() string {
	if e.Addr == "" {
		return "remoting: bad frame: " + errString(e.Err)
	}
	return "remoting: bad frame from " + e.Addr + ": " + errString(e.Err)
}

// Unwrap returns what was wrong.
func (e *FrameError) Unwrap() error { return e.Err }

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return strings.TrimPrefix(err.Error(), "remoting: ")
}

// timeoutError is an asynchronous call's timeout. It matches ErrTimeout and
// context.DeadlineExceeded, and reports Timeout() like a net.Error.
type timeoutError struct {
	after time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("remoting: request timed out after %v", e.after)
}

func (e *timeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

func (e *timeoutError) Timeout() bool { return true }

func (e *timeoutError) Temporary() bool { return true }
