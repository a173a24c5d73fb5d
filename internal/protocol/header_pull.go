package protocol

import "github.com/rmqpush/rmqpush/remoting"

// Expression types of a subscription.
const (
	ExpressionTypeTag   = "TAG"
	ExpressionTypeSQL92 = "SQL92"
)

// PullMessageRequest is the header of PULL_MESSAGE (11), Java's
// PullMessageRequestHeader.
type PullMessageRequest struct {
	ConsumerGroup        string // required
	Topic                string // required
	QueueID              int32  // required
	QueueOffset          int64  // required
	MaxMsgNums           int32  // required
	SysFlag              int32  // required: PullSysFlag* bits
	CommitOffset         int64  // required; stored by the broker when SysFlag has PullSysFlagCommitOffset
	SuspendTimeoutMillis int64  // required: how long the broker may hold the pull
	Subscription         string // the expression, used when SysFlag has PullSysFlagSubscription; omitted when empty
	SubVersion           int64  // required
	ExpressionType       string // "TAG" or "SQL92"; omitted when empty
	MaxMsgBytes          int32  // J5 only; omitted when 0
	BrokerName           string // "bname" (4.9.8+); omitted when empty
}

// Encode returns the ext fields in Java's order. It runs once per pull: the numbers
// share one string, so it makes two allocations.
func (h *PullMessageRequest) Encode() remoting.Fields {
	e := newFieldEncoder(13)
	e.str("consumerGroup", h.ConsumerGroup)
	e.str("topic", h.Topic)
	e.int32("queueId", h.QueueID)
	e.int64("queueOffset", h.QueueOffset)
	e.int32("maxMsgNums", h.MaxMsgNums)
	e.int32("sysFlag", h.SysFlag)
	e.int64("commitOffset", h.CommitOffset)
	e.int64("suspendTimeoutMillis", h.SuspendTimeoutMillis)
	e.strOpt("subscription", h.Subscription)
	e.int64("subVersion", h.SubVersion)
	e.strOpt("expressionType", h.ExpressionType)
	if h.MaxMsgBytes != 0 {
		e.int32("maxMsgBytes", h.MaxMsgBytes)
	}
	e.strOpt("bname", h.BrokerName)
	return e.done()
}

// Decode reads the header from f.
func (h *PullMessageRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "PullMessageRequest"}
	*h = PullMessageRequest{
		ConsumerGroup:        d.str("consumerGroup", true),
		Topic:                d.str("topic", true),
		QueueID:              d.int32("queueId", true),
		QueueOffset:          d.int64("queueOffset", true),
		MaxMsgNums:           d.int32("maxMsgNums", true),
		SysFlag:              d.int32("sysFlag", true),
		CommitOffset:         d.int64("commitOffset", true),
		SuspendTimeoutMillis: d.int64("suspendTimeoutMillis", true),
		Subscription:         d.str("subscription", false),
		SubVersion:           d.int64("subVersion", true),
		ExpressionType:       d.str("expressionType", false),
		MaxMsgBytes:          d.int32("maxMsgBytes", false),
		BrokerName:           d.str("bname", false),
	}
	return d.err
}

// PullMessageResponse is the header of a PULL_MESSAGE response with status FOUND,
// PULL_NOT_FOUND, PULL_RETRY_IMMEDIATELY or PULL_OFFSET_MOVED, Java's
// PullMessageResponseHeader. Other answers (SUBSCRIPTION_NOT_LATEST, errors) carry no
// such header.
type PullMessageResponse struct {
	SuggestWhichBrokerID int64 // required: 0 is the master
	NextBeginOffset      int64 // required
	MinOffset            int64 // required
	MaxOffset            int64 // required
	OffsetDelta          int64 // J5 static topics; omitted when 0
	TopicSysFlag         int32 // J5; omitted when 0
	GroupSysFlag         int32 // J5; omitted when 0
	ForbiddenType        int32 // J5; omitted when 0
}

// Encode returns the ext fields in Java's order.
func (h *PullMessageResponse) Encode() remoting.Fields {
	e := newFieldEncoder(8)
	e.int64("suggestWhichBrokerId", h.SuggestWhichBrokerID)
	e.int64("nextBeginOffset", h.NextBeginOffset)
	e.int64("minOffset", h.MinOffset)
	e.int64("maxOffset", h.MaxOffset)
	if h.OffsetDelta != 0 {
		e.int64("offsetDelta", h.OffsetDelta)
	}
	if h.TopicSysFlag != 0 {
		e.int32("topicSysFlag", h.TopicSysFlag)
	}
	if h.GroupSysFlag != 0 {
		e.int32("groupSysFlag", h.GroupSysFlag)
	}
	if h.ForbiddenType != 0 {
		e.int32("forbiddenType", h.ForbiddenType)
	}
	return e.done()
}

// Decode reads the header from f. It runs once per pull and allocates only when it
// fails.
func (h *PullMessageResponse) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "PullMessageResponse"}
	*h = PullMessageResponse{
		SuggestWhichBrokerID: d.int64("suggestWhichBrokerId", true),
		NextBeginOffset:      d.int64("nextBeginOffset", true),
		MinOffset:            d.int64("minOffset", true),
		MaxOffset:            d.int64("maxOffset", true),
		OffsetDelta:          d.int64("offsetDelta", false),
		TopicSysFlag:         d.int32("topicSysFlag", false),
		GroupSysFlag:         d.int32("groupSysFlag", false),
		ForbiddenType:        d.int32("forbiddenType", false),
	}
	return d.err
}
