package protocol

import (
	"strconv"

	"github.com/rmqpush/rmqpush/remoting"
)

// ResponseCodeError is a response code used as an error value: errors.Is(err,
// ResponseCodeError(ResponseSystemBusy)) holds for a *BrokerError with that code.
type ResponseCodeError int32

// Error returns the code's name and number, e.g. "SYSTEM_BUSY (2)".
func (c ResponseCodeError) Error() string {
	return ResponseName(int32(c)) + " (" + strconv.Itoa(int(c)) + ")"
}

// BrokerError is a response with a code other than the one the request expects, from
// a broker or a name server.
type BrokerError struct {
	Addr        string // the peer's address
	RequestCode int32  // the request's code
	Code        int32  // the response code
	Remark      string // the response's remark
	Opaque      int32  // the request's opaque
}

// NewBrokerError describes resp, the answer from addr to req. A nil req or resp leaves
// the matching fields zero.
func NewBrokerError(addr string, req, resp *remoting.Command) *BrokerError {
	e := &BrokerError{Addr: addr}
	if req != nil {
		e.RequestCode = req.Code
		e.Opaque = req.Opaque
	}
	if resp != nil {
		e.Code = resp.Code
		e.Remark = resp.Remark
		if req == nil {
			e.Opaque = resp.Opaque
		}
	}
	return e
}

// Error returns e.g. "broker 127.0.0.1:10911: PULL_MESSAGE (opaque 7): SYSTEM_BUSY
// (2): remark".
func (e *BrokerError) Error() string {
	s := "broker " + e.Addr + ": " + RequestName(e.RequestCode) + " (opaque " + strconv.Itoa(int(e.Opaque)) +
		"): " + ResponseName(e.Code) + " (" + strconv.Itoa(int(e.Code)) + ")"
	if e.Remark != "" {
		s += ": " + e.Remark
	}
	return s
}

// Is matches a ResponseCodeError with the same code, and a *BrokerError with the same
// code.
func (e *BrokerError) Is(target error) bool {
	switch t := target.(type) {
	case ResponseCodeError:
		return int32(t) == e.Code
	case *BrokerError:
		return t != nil && t.Code == e.Code
	}
	return false
}
