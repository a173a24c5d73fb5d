package client

import (
	"fmt"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// PullStatus is the outcome of a pull the broker answered normally.
type PullStatus int

// Pull statuses (Java's PullStatus), from the response codes 0, 19, 20 and 21.
const (
	PullFound         PullStatus = iota // messages in Body
	PullNoNewMsg                        // nothing at the offset yet
	PullNoMatchedMsg                    // nothing matched the subscription
	PullOffsetIllegal                   // the offset is out of the queue's range
)

// String returns the status's Java name.
func (s PullStatus) String() string {
	switch s {
	case PullFound:
		return "FOUND"
	case PullNoNewMsg:
		return "NO_NEW_MSG"
	case PullNoMatchedMsg:
		return "NO_MATCHED_MSG"
	case PullOffsetIllegal:
		return "OFFSET_ILLEGAL"
	default:
		return fmt.Sprintf("PullStatus(%d)", int(s))
	}
}

// PullResult is a pull's answer.
type PullResult struct {
	Status               PullStatus
	NextBeginOffset      int64
	MinOffset            int64
	MaxOffset            int64
	SuggestWhichBrokerID int64
	Body                 []byte // store records, for PullFound
}

// PullAsync sends a PULL_MESSAGE to addr without waiting: callback gets the result, or an
// error (a *protocol.BrokerError for any other response code, e.g. FLOW_CONTROL, or the
// transport's error). The callback runs on a connection's read loop or a timer and must
// not block. If PullAsync returns an error the callback is not called. bodies, when not
// nil, lends the buffer the answer's body is read into (remoting.BodySource).
func (i *Instance) PullAsync(addr string, h *protocol.PullMessageRequest, timeout time.Duration, bodies remoting.BodySource, callback func(*PullResult, error)) error {
	if i.closed() {
		return ErrClosed
	}
	req := remoting.NewRequest(protocol.RequestPullMessage, h.Encode(), nil)
	return i.rc.InvokeAsyncInto(addr, req, timeout, bodies, func(resp *remoting.Command, err error) {
		if err != nil {
			callback(nil, fmt.Errorf("client: pull %s:%d at %d from %s: %w", h.Topic, h.QueueID, h.QueueOffset, addr, err))
			return
		}
		callback(pullResult(addr, req, resp))
	})
}

func pullResult(addr string, req, resp *remoting.Command) (*PullResult, error) {
	var status PullStatus
	switch resp.Code {
	case protocol.ResponseSuccess:
		status = PullFound
	case protocol.ResponsePullNotFound:
		status = PullNoNewMsg
	case protocol.ResponsePullRetryImmediately:
		status = PullNoMatchedMsg
	case protocol.ResponsePullOffsetMoved:
		status = PullOffsetIllegal
	default:
		return nil, protocol.NewBrokerError(addr, req, resp)
	}
	var h protocol.PullMessageResponse
	if err := h.Decode(resp.ExtFields); err != nil {
		return nil, fmt.Errorf("client: pull answer from %s (code %d, opaque %d): %w", addr, resp.Code, req.Opaque, err)
	}
	return &PullResult{
		Status:               status,
		NextBeginOffset:      h.NextBeginOffset,
		MinOffset:            h.MinOffset,
		MaxOffset:            h.MaxOffset,
		SuggestWhichBrokerID: h.SuggestWhichBrokerID,
		Body:                 resp.Body,
	}, nil
}
