package client

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// PopStatus is the outcome of a pop the broker answered normally.
type PopStatus int

// Pop statuses (Java's PopStatus), from the response codes 0, 210 (or 19) and 209.
const (
	PopFound       PopStatus = iota // messages in Body
	PopNotFound                     // nothing within the poll time (POLLING_TIMEOUT, or PULL_NOT_FOUND)
	PopPollingFull                  // the broker holds too many pops already
)

// String returns the status's Java name.
func (s PopStatus) String() string {
	switch s {
	case PopFound:
		return "FOUND"
	case PopNotFound:
		return "POLLING_NOT_FOUND"
	case PopPollingFull:
		return "POLLING_FULL"
	default:
		return fmt.Sprintf("PopStatus(%d)", int(s))
	}
}

// PopResult is a pop's answer.
type PopResult struct {
	Status PopStatus
	Header protocol.PopMessageResponse // all zero but for a FOUND or POLLING_TIMEOUT answer
	Body   []byte                      // store records, for PopFound
}

// PopAsync sends a POP_MESSAGE to addr without waiting, as PullAsync does a pull:
// callback gets the result or an error (a *protocol.BrokerError for any other response
// code, e.g. FLOW_CONTROL) on a connection's read loop or a timer. bodies, when not nil,
// lends the buffer the answer's body is read into (remoting.BodySource).
func (i *Instance) PopAsync(addr string, h *protocol.PopMessageRequest, timeout time.Duration, bodies remoting.BodySource, callback func(*PopResult, error)) error {
	if i.closed() {
		return ErrClosed
	}
	req := remoting.NewRequest(protocol.RequestPopMessage, h.Encode(), nil)
	return i.rc.InvokeAsyncInto(addr, req, timeout, bodies, func(resp *remoting.Command, err error) {
		if err != nil {
			callback(nil, fmt.Errorf("client: pop %s:%d from %s: %w", h.Topic, h.QueueID, addr, err))
			return
		}
		callback(popResult(addr, req, resp))
	})
}

func popResult(addr string, req, resp *remoting.Command) (*PopResult, error) {
	res := &PopResult{}
	switch resp.Code {
	case protocol.ResponseSuccess:
		res.Status = PopFound
	case protocol.ResponsePollingTimeout, protocol.ResponsePullNotFound:
		res.Status = PopNotFound
	case protocol.ResponsePollingFull:
		res.Status = PopPollingFull
	default:
		return nil, protocol.NewBrokerError(addr, req, resp)
	}
	if res.Status == PopFound || len(resp.ExtFields) > 0 {
		if err := res.Header.Decode(resp.ExtFields); err != nil {
			return nil, fmt.Errorf("client: pop answer from %s (code %d, opaque %d): %w", addr, resp.Code, req.Opaque, err)
		}
	}
	res.Body = resp.Body
	return res, nil
}

// SetPopHandles gives each message of a FOUND pop answer its ack handle, the POP_CK
// property, as Java's processPopResponse does: the start offset of its queue in this
// pop, the answer's pop time, invisible time and revive queue, and its own offset from
// the answer's msgOffsetInfo (the i-th message of a queue has the i-th offset listed).
// A message revived from the POP retry topic already has the broker's handle, which is
// kept. Every message gets 1ST_POP_TIME unless it has one, and brokerName. An answer
// whose offset infos do not account for its messages is an error: its messages could
// not be acked. The handles are written into one string and the properties added from
// one slice (message.Properties.AddShared): a few allocations per answer, not per
// message.
func SetPopHandles(brokerName string, h *protocol.PopMessageResponse, msgs []*message.Ext) error {
	offs, err := protocol.ParsePopOffsets(h.StartOffsetInfo, h.MsgOffsetInfo)
	if err != nil {
		return err
	}
	// used: the offsets of each queue handed out so far; ends: the end of each message's
	// handle in buf, -1 when it has one. On the stack for up to 8 queues and 32
	// messages, as a pop's answer has.
	var usedArr [8]int
	var endsArr [32]int
	used, ends := usedArr[:0], endsArr[:0]
	if len(offs) > len(usedArr) {
		used = make([]int, 0, len(offs))
	}
	if len(msgs) > len(endsArr) {
		ends = make([]int, 0, len(msgs))
	}
	used, ends = used[:len(offs)], ends[:len(msgs)]
	var buf strings.Builder // its String does not copy
	buf.Grow(len(msgs) * (48 + len(brokerName)))
	var handleArr [96]byte // a handle: about 52 bytes and the broker name; grown once if need be
	handle := handleArr[:0]
	for k, m := range msgs {
		ends[k] = -1
		if _, ok := m.Properties.Get(protocol.PropertyPopCK); ok {
			continue
		}
		mark := protocol.TopicMark(m.Topic)
		i := offs.Index(mark, m.QueueID)
		if i < 0 || offs[i].StartOffset < 0 {
			return fmt.Errorf("client: pop answer lists no %c queue %d for message %s at %d", mark, m.QueueID, m.MsgID(), m.QueueOffset)
		}
		q := &offs[i]
		if used[i] >= len(q.Offsets) {
			return fmt.Errorf("client: pop answer lists %d offsets for %c queue %d, and has more messages", len(q.Offsets), mark, m.QueueID)
		}
		handle = protocol.ExtraInfo{CkQueueOffset: q.StartOffset, PopTime: h.PopTime, InvisibleTime: h.InvisibleTime,
			ReviveQID: h.ReviveQID, TopicMark: mark, BrokerName: brokerName, QueueID: m.QueueID,
			QueueOffset: q.Offsets[used[i]]}.AppendTo(handle[:0])
		buf.Write(handle)
		used[i]++
		ends[k] = buf.Len()
	}
	handles := buf.String()
	popTime := strconv.FormatInt(h.PopTime, 10)
	pairs := make([]message.Property, 0, 2*len(msgs))
	start := 0
	for k, m := range msgs {
		n := len(pairs)
		if ends[k] >= 0 {
			pairs = append(pairs, message.Property{Name: protocol.PropertyPopCK, Value: handles[start:ends[k]]})
			start = ends[k]
		}
		if _, ok := m.Properties.Get(protocol.PropertyFirstPopTime); !ok {
			pairs = append(pairs, message.Property{Name: protocol.PropertyFirstPopTime, Value: popTime})
		}
		if len(pairs) > n {
			m.Properties.AddShared(pairs[n:len(pairs):len(pairs)])
		}
		m.BrokerName = brokerName
	}
	return nil
}

// AckAsync sends an ACK_MESSAGE; callback gets nil when the broker answered SUCCESS, else
// the error (a *protocol.BrokerError for another code). A broker answers SUCCESS for an
// ack that comes too late as well: the message was revived already.
func (i *Instance) AckAsync(addr string, h *protocol.AckMessageRequest, timeout time.Duration, callback func(error)) error {
	return i.invokeSimpleAsync(addr, remoting.NewRequest(protocol.RequestAckMessage, h.Encode(), nil), timeout, callback)
}

// BatchAckAsync sends a BATCH_ACK_MESSAGE, as AckAsync an ACK_MESSAGE. A broker without
// it answers REQUEST_CODE_NOT_SUPPORTED.
func (i *Instance) BatchAckAsync(addr string, b *protocol.BatchAckRequest, timeout time.Duration, callback func(error)) error {
	return i.invokeSimpleAsync(addr, remoting.NewRequest(protocol.RequestBatchAckMessage, nil, b.Encode(protocol.StyleStandard)), timeout, callback)
}

// ChangeInvisibleTimeAsync sends a CHANGE_MESSAGE_INVISIBLETIME; callback gets the
// message's new handle (the request's, with the answer's pop time, invisible time and
// revive queue, and its own offset as the checkpoint's, as Java builds it) or an error.
func (i *Instance) ChangeInvisibleTimeAsync(addr string, h *protocol.ChangeInvisibleTimeRequest, timeout time.Duration, callback func(protocol.ExtraInfo, error)) error {
	if i.closed() {
		return ErrClosed
	}
	old, err := protocol.ParseExtraInfo(h.ExtraInfo)
	if err != nil {
		return err
	}
	req := remoting.NewRequest(protocol.RequestChangeMessageInvisibleTime, h.Encode(), nil)
	return i.rc.InvokeAsync(addr, req, timeout, func(resp *remoting.Command, err error) {
		if err != nil {
			callback(protocol.ExtraInfo{}, fmt.Errorf("client: CHANGE_MESSAGE_INVISIBLETIME to %s: %w", addr, err))
			return
		}
		if resp.Code != protocol.ResponseSuccess {
			callback(protocol.ExtraInfo{}, protocol.NewBrokerError(addr, req, resp))
			return
		}
		var rh protocol.ChangeInvisibleTimeResponse
		if err := rh.Decode(resp.ExtFields); err != nil {
			callback(protocol.ExtraInfo{}, answerError(addr, resp, err))
			return
		}
		callback(protocol.ExtraInfo{CkQueueOffset: h.Offset, PopTime: rh.PopTime, InvisibleTime: rh.InvisibleTime,
			ReviveQID: rh.ReviveQID, TopicMark: old.TopicMark, BrokerName: old.BrokerName, QueueID: h.QueueID,
			QueueOffset: h.Offset}, nil)
	})
}

// invokeSimpleAsync sends req and reports nil for a SUCCESS answer, else the error.
func (i *Instance) invokeSimpleAsync(addr string, req *remoting.Command, timeout time.Duration, callback func(error)) error {
	if i.closed() {
		return ErrClosed
	}
	return i.rc.InvokeAsync(addr, req, timeout, func(resp *remoting.Command, err error) {
		switch {
		case err != nil:
			callback(fmt.Errorf("client: %s to %s: %w", protocol.RequestName(req.Code), addr, err))
		case resp.Code != protocol.ResponseSuccess:
			callback(protocol.NewBrokerError(addr, req, resp))
		default:
			callback(nil)
		}
	})
}
