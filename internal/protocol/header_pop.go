package protocol

import "github.com/rmqpush/rmqpush/remoting"

// ConsumeInitMode says where a group that never consumed a queue starts popping it
// (Java's ConsumeInitMode): the push consumer sends InitModeMin for
// CONSUME_FROM_FIRST_OFFSET and InitModeMax otherwise.
const (
	InitModeMin int32 = 0
	InitModeMax int32 = 1
)

// PopMessageRequest is the header of POP_MESSAGE (200050), Java 5.3.3's
// PopMessageRequestHeader. Encode writes the fields in the order the Java client does
// (golden p_pop_533, 0079).
type PopMessageRequest struct {
	PollTime      int64  // required: how long the broker may hold the pop when it finds nothing (ms)
	InvisibleTime int64  // required: how long popped messages stay invisible to other pops (ms)
	QueueID       int32  // required: the queue, or -1 for any queue of the topic
	BornTime      int64  // required: the client's clock when sent (ms); the broker answers POLLING_TIMEOUT at once when it is more than the poll time and 500 ms old
	MaxMsgNums    int32  // required: at most this many messages (1–32)
	BrokerName    string // "bname"; omitted when empty
	Topic         string // required: the topic (never a retry topic: the broker pops the group's POP retry topic itself)
	ExpType       string // the subscription's type ("TAG", "SQL92"); omitted when empty
	Exp           string // the subscription's expression; omitted when empty
	ConsumerGroup string // required
	InitMode      int32  // required: InitModeMin or InitModeMax
	Order         bool   // orderly POP (not used by rmqpush)
	AttemptID     string // orderly POP's attempt id; omitted when empty
}

// Encode returns the ext fields in the Java client's order.
func (h *PopMessageRequest) Encode() remoting.Fields {
	e := newFieldEncoder(13)
	e.int64("pollTime", h.PollTime)
	e.int64("invisibleTime", h.InvisibleTime)
	e.int32("queueId", h.QueueID)
	e.int64("bornTime", h.BornTime)
	e.int32("maxMsgNums", h.MaxMsgNums)
	e.strOpt("bname", h.BrokerName)
	e.str("topic", h.Topic)
	e.strOpt("expType", h.ExpType)
	e.strOpt("exp", h.Exp)
	e.str("consumerGroup", h.ConsumerGroup)
	e.int32("initMode", h.InitMode)
	e.boolean("order", h.Order)
	e.strOpt("attemptId", h.AttemptID)
	return e.done()
}

// Decode reads the header from f.
func (h *PopMessageRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "PopMessageRequest"}
	*h = PopMessageRequest{
		PollTime:      d.int64("pollTime", true),
		InvisibleTime: d.int64("invisibleTime", true),
		QueueID:       d.int32("queueId", true),
		BornTime:      d.int64("bornTime", true),
		MaxMsgNums:    d.int32("maxMsgNums", true),
		BrokerName:    d.str("bname", false),
		Topic:         d.str("topic", true),
		ExpType:       d.str("expType", false),
		Exp:           d.str("exp", false),
		ConsumerGroup: d.str("consumerGroup", true),
		InitMode:      d.int32("initMode", true),
		Order:         d.boolean("order", false),
		AttemptID:     d.str("attemptId", false),
	}
	return d.err
}

// PopMessageResponse is the header of a POP_MESSAGE answer (SUCCESS, POLLING_TIMEOUT,
// POLLING_FULL), Java's PopMessageResponseHeader, in the broker's field order (golden
// p_pop_533, 0080 and 0156). The info fields say where the popped messages come from
// (PopOffsetInfo); they are empty, but present, when nothing was popped.
type PopMessageResponse struct {
	InvisibleTime   int64  // required: the invisible time of this pop
	StartOffsetInfo string // "topicMark queueId startOffset;..." (ParseStartOffsetInfo)
	RestNum         int64  // required: messages left behind the ones returned
	PopTime         int64  // required: the broker's clock at the pop (ms)
	ReviveQID       int32  // required: the revive queue holding the pop's checkpoint
	MsgOffsetInfo   string // "topicMark queueId offset,offset,...;..." (ParseMsgOffsetInfo)
	OrderCountInfo  string // orderly POP only; omitted when empty
}

// Encode returns the ext fields in the broker's order. StartOffsetInfo and MsgOffsetInfo
// are written even when empty, as the broker writes them.
func (h *PopMessageResponse) Encode() remoting.Fields {
	e := newFieldEncoder(7)
	e.int64("invisibleTime", h.InvisibleTime)
	e.str("startOffsetInfo", h.StartOffsetInfo)
	e.int64("restNum", h.RestNum)
	e.int64("popTime", h.PopTime)
	e.int32("reviveQid", h.ReviveQID)
	e.str("msgOffsetInfo", h.MsgOffsetInfo)
	e.strOpt("orderCountInfo", h.OrderCountInfo)
	return e.done()
}

// Decode reads the header from f.
func (h *PopMessageResponse) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "PopMessageResponse"}
	*h = PopMessageResponse{
		InvisibleTime:   d.int64("invisibleTime", true),
		StartOffsetInfo: d.str("startOffsetInfo", false),
		RestNum:         d.int64("restNum", true),
		PopTime:         d.int64("popTime", true),
		ReviveQID:       d.int32("reviveQid", true),
		MsgOffsetInfo:   d.str("msgOffsetInfo", false),
		OrderCountInfo:  d.str("orderCountInfo", false),
	}
	return d.err
}

// AckMessageRequest is the header of ACK_MESSAGE (200051), Java's
// AckMessageRequestHeader, in the Java client's order (golden p_pop_533, 0081). Topic,
// QueueID and Offset name the message where it was popped from: for a message popped
// from the group's POP retry topic, that topic (ExtraInfo.RealTopic).
type AckMessageRequest struct {
	QueueID       int32  // required
	Offset        int64  // required: the message's queue offset
	BrokerName    string // "bname"; omitted when empty
	Topic         string // required
	ConsumerGroup string // required
	ExtraInfo     string // required: the message's POP_CK property
}

// Encode returns the ext fields in the Java client's order.
func (h *AckMessageRequest) Encode() remoting.Fields {
	e := newFieldEncoder(6)
	e.int32("queueId", h.QueueID)
	e.int64("offset", h.Offset)
	e.strOpt("bname", h.BrokerName)
	e.str("topic", h.Topic)
	e.str("consumerGroup", h.ConsumerGroup)
	e.str("extraInfo", h.ExtraInfo)
	return e.done()
}

// Decode reads the header from f.
func (h *AckMessageRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "AckMessageRequest"}
	*h = AckMessageRequest{
		QueueID:       d.int32("queueId", true),
		Offset:        d.int64("offset", true),
		BrokerName:    d.str("bname", false),
		Topic:         d.str("topic", true),
		ConsumerGroup: d.str("consumerGroup", true),
		ExtraInfo:     d.str("extraInfo", true),
	}
	return d.err
}

// ChangeInvisibleTimeRequest is the header of CHANGE_MESSAGE_INVISIBLETIME (200053),
// Java's ChangeInvisibleTimeRequestHeader, in the Java client's order (golden
// p_pop_533, 0120): make a popped message invisible for InvisibleTime from now on. The
// broker acks the old handle and answers a new pop time: the message's handle from
// then on (ChangeInvisibleTimeResponse).
type ChangeInvisibleTimeRequest struct {
	InvisibleTime int64  // required (ms)
	QueueID       int32  // required
	Offset        int64  // required
	BrokerName    string // "bname"; omitted when empty
	Topic         string // required: as in AckMessageRequest
	ConsumerGroup string // required
	ExtraInfo     string // required: the message's current handle
}

// Encode returns the ext fields in the Java client's order.
func (h *ChangeInvisibleTimeRequest) Encode() remoting.Fields {
	e := newFieldEncoder(7)
	e.int64("invisibleTime", h.InvisibleTime)
	e.int32("queueId", h.QueueID)
	e.int64("offset", h.Offset)
	e.strOpt("bname", h.BrokerName)
	e.str("topic", h.Topic)
	e.str("consumerGroup", h.ConsumerGroup)
	e.str("extraInfo", h.ExtraInfo)
	return e.done()
}

// Decode reads the header from f.
func (h *ChangeInvisibleTimeRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "ChangeInvisibleTimeRequest"}
	*h = ChangeInvisibleTimeRequest{
		InvisibleTime: d.int64("invisibleTime", true),
		QueueID:       d.int32("queueId", true),
		Offset:        d.int64("offset", true),
		BrokerName:    d.str("bname", false),
		Topic:         d.str("topic", true),
		ConsumerGroup: d.str("consumerGroup", true),
		ExtraInfo:     d.str("extraInfo", true),
	}
	return d.err
}

// ChangeInvisibleTimeResponse is the header of a CHANGE_MESSAGE_INVISIBLETIME answer
// (golden p_pop_533, 0121).
type ChangeInvisibleTimeResponse struct {
	InvisibleTime int64 // required: echoed
	PopTime       int64 // required: the message's new pop time
	ReviveQID     int32 // required
}

// Encode returns the ext fields in the broker's order.
func (h *ChangeInvisibleTimeResponse) Encode() remoting.Fields {
	e := newFieldEncoder(3)
	e.int64("invisibleTime", h.InvisibleTime)
	e.int64("popTime", h.PopTime)
	e.int32("reviveQid", h.ReviveQID)
	return e.done()
}

// Decode reads the header from f.
func (h *ChangeInvisibleTimeResponse) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "ChangeInvisibleTimeResponse"}
	*h = ChangeInvisibleTimeResponse{
		InvisibleTime: d.int64("invisibleTime", true),
		PopTime:       d.int64("popTime", true),
		ReviveQID:     d.int32("reviveQid", true),
	}
	return d.err
}
