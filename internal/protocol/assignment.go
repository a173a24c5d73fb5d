package protocol

import (
	"fmt"

	"github.com/rmqpush/rmqpush/message"
)

// MessageRequestMode is how a group consumes a topic's queue when the broker assigns
// queues (Java's MessageRequestMode).
type MessageRequestMode string

// Request modes.
const (
	RequestModePull MessageRequestMode = "PULL"
	RequestModePop  MessageRequestMode = "POP"
)

// QueryAssignmentRequest is the body of QUERY_ASSIGNMENT (400), which has no ext
// fields (golden p_pop_533, 0070): which queues of Topic does ClientID of the group
// consume, and how.
type QueryAssignmentRequest struct {
	Topic         string
	ConsumerGroup string
	ClientID      string // "clientId"
	StrategyName  string // the allocation strategy's name; a 5.3.3 broker knows AVG and AVG_BY_CIRCLE
	MessageModel  MessageModel
}

// Encode writes the body as the Java client does (keys in alphabetical order).
func (b *QueryAssignmentRequest) Encode(style Style) []byte {
	w := NewWriter(style)
	w.BeginObject()
	w.Key("clientId")
	w.Str(b.ClientID)
	w.Key("consumerGroup")
	w.Str(b.ConsumerGroup)
	w.Key("messageModel")
	w.Str(string(b.MessageModel))
	w.Key("strategyName")
	w.Str(b.StrategyName)
	w.Key("topic")
	w.Str(b.Topic)
	w.EndObject()
	return w.Bytes()
}

// Decode reads the body.
func (b *QueryAssignmentRequest) Decode(data []byte) error {
	const name = "QueryAssignmentRequest"
	root, err := parseBody(name, data)
	if err != nil {
		return err
	}
	*b = QueryAssignmentRequest{}
	return bodyErr(name, root.Fields(func(field string, v Value) error {
		var err error
		var s string
		switch field {
		case "topic":
			b.Topic, err = v.Str()
		case "consumerGroup":
			b.ConsumerGroup, err = v.Str()
		case "clientId":
			b.ClientID, err = v.Str()
		case "strategyName":
			b.StrategyName, err = v.Str()
		case "messageModel":
			s, err = v.Str()
			b.MessageModel = MessageModel(s)
		}
		return at(field, err)
	}))
}

// QueueAssignment is one assigned queue and how to consume it. A POP queue may have
// queue id -1: pop from any queue of the topic on that broker.
type QueueAssignment struct {
	Queue message.Queue
	Mode  MessageRequestMode
}

// QueryAssignmentResponse is the body of a QUERY_ASSIGNMENT answer (golden p_pop_533,
// 0071 and 0077). Null is true when the broker had no answer (an unknown topic or
// strategy, no member list): Java's client then keeps its queues as they are. An empty
// list means the client consumes nothing of the topic.
type QueryAssignmentResponse struct {
	Assignments []QueueAssignment
	Null        bool // messageQueueAssignments absent or null
}

// Encode writes the body as the broker does: assignments in the order given, each
// {"messageQueue":{...},"mode":...}; nothing when Null.
func (b *QueryAssignmentResponse) Encode(style Style) []byte {
	w := NewWriter(style)
	w.BeginObject()
	if !b.Null {
		w.Key("messageQueueAssignments")
		w.BeginArray()
		for _, a := range b.Assignments {
			w.BeginObject()
			w.Key("messageQueue")
			w.Queue(a.Queue)
			w.Key("mode")
			w.Str(string(a.Mode))
			w.EndObject()
		}
		w.EndArray()
	}
	w.EndObject()
	return w.Bytes()
}

// Decode reads the body. An assignment without a queue is skipped, as Java skips it; a
// mode other than POP counts as PULL, as in Java's updateMessageQueueAssignment.
func (b *QueryAssignmentResponse) Decode(data []byte) error {
	const name = "QueryAssignmentResponse"
	root, err := parseBody(name, data)
	if err != nil {
		return err
	}
	*b = QueryAssignmentResponse{Null: true}
	return bodyErr(name, root.Fields(func(field string, v Value) error {
		if field != "messageQueueAssignments" || v.IsNull() {
			return nil
		}
		b.Null = false
		type entry struct {
			a  QueueAssignment
			ok bool // it named a queue
		}
		list, err := arrayOf(v, func(e Value) (entry, error) {
			x := entry{a: QueueAssignment{Mode: RequestModePull}}
			err := e.Fields(func(f string, fv Value) error {
				var err error
				switch {
				case f == "messageQueue" && !fv.IsNull():
					x.ok = true
					x.a.Queue, err = decodeQueueObject(fv)
				case f == "mode" && !fv.IsNull():
					var s string
					if s, err = fv.Str(); MessageRequestMode(s) == RequestModePop {
						x.a.Mode = RequestModePop
					}
				}
				return at(f, err)
			})
			return x, err
		})
		if err != nil {
			return at(field, err)
		}
		b.Assignments = make([]QueueAssignment, 0, len(list))
		for _, x := range list {
			if x.ok {
				b.Assignments = append(b.Assignments, x.a)
			}
		}
		return nil
	}))
}

// SetMessageRequestModeRequest is the body of SET_MESSAGE_REQUEST_MODE (401), which
// mqadmin setConsumeMode sends to every broker of a cluster (golden p_pop_533, 0007).
// PopShareQueueNum is how many members' queues each member also pops: 0 or at least
// the number of members less one makes every member pop every queue.
type SetMessageRequestModeRequest struct {
	Topic            string
	ConsumerGroup    string
	Mode             MessageRequestMode
	PopShareQueueNum int32
}

// Encode writes the body as mqadmin does (keys in alphabetical order).
func (b *SetMessageRequestModeRequest) Encode(style Style) []byte {
	w := NewWriter(style)
	w.BeginObject()
	w.Key("consumerGroup")
	w.Str(b.ConsumerGroup)
	w.Key("mode")
	w.Str(string(b.Mode))
	w.Key("popShareQueueNum")
	w.Int(int64(b.PopShareQueueNum))
	w.Key("topic")
	w.Str(b.Topic)
	w.EndObject()
	return w.Bytes()
}

// Decode reads the body. A mode other than PULL or POP is an error.
func (b *SetMessageRequestModeRequest) Decode(data []byte) error {
	const name = "SetMessageRequestModeRequest"
	root, err := parseBody(name, data)
	if err != nil {
		return err
	}
	*b = SetMessageRequestModeRequest{Mode: RequestModePull}
	return bodyErr(name, root.Fields(func(field string, v Value) error {
		var err error
		switch field {
		case "topic":
			b.Topic, err = v.Str()
		case "consumerGroup":
			b.ConsumerGroup, err = v.Str()
		case "popShareQueueNum":
			b.PopShareQueueNum, err = v.Int32()
		case "mode":
			var s string
			if s, err = v.Str(); err == nil {
				switch MessageRequestMode(s) {
				case RequestModePull, RequestModePop:
					b.Mode = MessageRequestMode(s)
				default:
					err = fmt.Errorf("unknown mode %q", truncate(s))
				}
			}
		}
		return at(field, err)
	}))
}
