package protocol

import "github.com/rmqpush/rmqpush/remoting"

// UnregisterClientRequest is the header of UNREGISTER_CLIENT (35). Java sends one per
// group: a consumer group or a producer group.
type UnregisterClientRequest struct {
	ClientID      string // "clientID" (capital ID); required
	ProducerGroup string // omitted when empty
	ConsumerGroup string // omitted when empty
}

// Encode returns the ext fields.
func (h *UnregisterClientRequest) Encode() remoting.Fields {
	e := newFieldEncoder(3)
	e.str("clientID", h.ClientID)
	e.strOpt("producerGroup", h.ProducerGroup)
	e.strOpt("consumerGroup", h.ConsumerGroup)
	return e.done()
}

// Decode reads the header from f.
func (h *UnregisterClientRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "UnregisterClientRequest"}
	*h = UnregisterClientRequest{
		ClientID:      d.str("clientID", true),
		ProducerGroup: d.str("producerGroup", false),
		ConsumerGroup: d.str("consumerGroup", false),
	}
	return d.err
}

// GetConsumerListByGroupRequest is the header of GET_CONSUMER_LIST_BY_GROUP (38).
type GetConsumerListByGroupRequest struct {
	ConsumerGroup string // required
}

// Encode returns the ext fields.
func (h *GetConsumerListByGroupRequest) Encode() remoting.Fields {
	return remoting.Fields{{Key: "consumerGroup", Value: h.ConsumerGroup}}
}

// Decode reads the header from f.
func (h *GetConsumerListByGroupRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "GetConsumerListByGroupRequest"}
	h.ConsumerGroup = d.str("consumerGroup", true)
	return d.err
}

// NotifyConsumerIDsChangedRequest is the header of the broker's oneway
// NOTIFY_CONSUMER_IDS_CHANGED (40).
type NotifyConsumerIDsChangedRequest struct {
	ConsumerGroup string // required
}

// Encode returns the ext fields.
func (h *NotifyConsumerIDsChangedRequest) Encode() remoting.Fields {
	return remoting.Fields{{Key: "consumerGroup", Value: h.ConsumerGroup}}
}

// Decode reads the header from f.
func (h *NotifyConsumerIDsChangedRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "NotifyConsumerIDsChangedRequest"}
	h.ConsumerGroup = d.str("consumerGroup", true)
	return d.err
}

// GetRouteInfoRequest is the header of GET_ROUTEINFO_BY_TOPIC (105), sent to a name
// server.
type GetRouteInfoRequest struct {
	Topic string // required
	// AcceptStandardJSONOnly asks a 4.9.4+ name server for standard JSON whatever the
	// request's version. Written only when true.
	AcceptStandardJSONOnly bool
}

// Encode returns the ext fields.
func (h *GetRouteInfoRequest) Encode() remoting.Fields {
	e := newFieldEncoder(2)
	e.str("topic", h.Topic)
	if h.AcceptStandardJSONOnly {
		e.boolean("acceptStandardJsonOnly", true)
	}
	return e.done()
}

// Decode reads the header from f.
func (h *GetRouteInfoRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "GetRouteInfoRequest"}
	*h = GetRouteInfoRequest{
		Topic:                  d.str("topic", true),
		AcceptStandardJSONOnly: d.boolean("acceptStandardJsonOnly", false),
	}
	return d.err
}

// ResetOffsetRequest is the header of the broker's oneway RESET_CONSUMER_CLIENT_OFFSET
// (220) and of an admin's INVOKE_BROKER_TO_RESET_OFFSET (222).
type ResetOffsetRequest struct {
	Topic     string          // required
	Group     string          // required
	Timestamp int64           // required: ms, -1 for "now"
	IsForce   bool            // required
	QueueID   Optional[int32] // J5
	Offset    Optional[int64] // J5
}

// Encode returns the ext fields.
func (h *ResetOffsetRequest) Encode() remoting.Fields {
	e := newFieldEncoder(6)
	e.str("topic", h.Topic)
	e.str("group", h.Group)
	e.int64("timestamp", h.Timestamp)
	e.boolean("isForce", h.IsForce)
	e.optInt32("queueId", h.QueueID)
	e.optInt64("offset", h.Offset)
	return e.done()
}

// Decode reads the header from f.
func (h *ResetOffsetRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "ResetOffsetRequest"}
	*h = ResetOffsetRequest{
		Topic:     d.str("topic", true),
		Group:     d.str("group", true),
		Timestamp: d.int64("timestamp", true),
		IsForce:   d.boolean("isForce", true),
		QueueID:   d.optInt32("queueId"),
		Offset:    d.optInt64("offset"),
	}
	return d.err
}

// GetConsumerStatusRequest is the header of GET_CONSUMER_STATUS_FROM_CLIENT (221) and
// INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223).
type GetConsumerStatusRequest struct {
	Topic      string // required
	Group      string // required
	ClientAddr string // omitted when empty
}

// Encode returns the ext fields.
func (h *GetConsumerStatusRequest) Encode() remoting.Fields {
	e := newFieldEncoder(3)
	e.str("topic", h.Topic)
	e.str("group", h.Group)
	e.strOpt("clientAddr", h.ClientAddr)
	return e.done()
}

// Decode reads the header from f.
func (h *GetConsumerStatusRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "GetConsumerStatusRequest"}
	*h = GetConsumerStatusRequest{
		Topic:      d.str("topic", true),
		Group:      d.str("group", true),
		ClientAddr: d.str("clientAddr", false),
	}
	return d.err
}

// GetConsumerRunningInfoRequest is the header of GET_CONSUMER_RUNNING_INFO (307).
type GetConsumerRunningInfoRequest struct {
	ConsumerGroup string // required
	ClientID      string // "clientId"; required
	JstackEnable  bool   // always written
}

// Encode returns the ext fields.
func (h *GetConsumerRunningInfoRequest) Encode() remoting.Fields {
	e := newFieldEncoder(3)
	e.str("consumerGroup", h.ConsumerGroup)
	e.str("clientId", h.ClientID)
	e.boolean("jstackEnable", h.JstackEnable)
	return e.done()
}

// Decode reads the header from f.
func (h *GetConsumerRunningInfoRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "GetConsumerRunningInfoRequest"}
	*h = GetConsumerRunningInfoRequest{
		ConsumerGroup: d.str("consumerGroup", true),
		ClientID:      d.str("clientId", true),
		JstackEnable:  d.boolean("jstackEnable", false),
	}
	return d.err
}

// ConsumeMessageDirectlyRequest is the header of CONSUME_MESSAGE_DIRECTLY (309), Java's
// ConsumeMessageDirectlyResultRequestHeader. The body is one store-encoded message.
type ConsumeMessageDirectlyRequest struct {
	ConsumerGroup string // required
	ClientID      string // "clientId"; omitted when empty
	MsgID         string // omitted when empty
	BrokerName    string // "brokerName"; omitted when empty
}

// Encode returns the ext fields.
func (h *ConsumeMessageDirectlyRequest) Encode() remoting.Fields {
	e := newFieldEncoder(4)
	e.str("consumerGroup", h.ConsumerGroup)
	e.strOpt("clientId", h.ClientID)
	e.strOpt("msgId", h.MsgID)
	e.strOpt("brokerName", h.BrokerName)
	return e.done()
}

// Decode reads the header from f.
func (h *ConsumeMessageDirectlyRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "ConsumeMessageDirectlyRequest"}
	*h = ConsumeMessageDirectlyRequest{
		ConsumerGroup: d.str("consumerGroup", true),
		ClientID:      d.str("clientId", false),
		MsgID:         d.str("msgId", false),
		BrokerName:    d.str("brokerName", false),
	}
	return d.err
}

// HeartbeatResponse is the header of a HEART_BEAT answer. A 4.9 broker sends no ext
// fields (its version is in the command's version field); a 5.x broker adds the two
// flags below.
type HeartbeatResponse struct {
	SupportHeartbeatV2 bool // "IS_SUPPORT_HEART_BEAT_V2"; written only when true
	SubChange          bool // "IS_SUB_CHANGE"; written only when true
}

// Encode returns the ext fields (none for a 4.9-style answer).
func (h *HeartbeatResponse) Encode() remoting.Fields {
	var f remoting.Fields
	if h.SupportHeartbeatV2 {
		f = append(f, remoting.Field{Key: "IS_SUPPORT_HEART_BEAT_V2", Value: "true"})
	}
	if h.SubChange {
		f = append(f, remoting.Field{Key: "IS_SUB_CHANGE", Value: "true"})
	}
	return f
}

// Decode reads the header from f.
func (h *HeartbeatResponse) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "HeartbeatResponse"}
	*h = HeartbeatResponse{
		SupportHeartbeatV2: d.boolean("IS_SUPPORT_HEART_BEAT_V2", false),
		SubChange:          d.boolean("IS_SUB_CHANGE", false),
	}
	return d.err
}
