package protocol

import "github.com/rmqpush/rmqpush/remoting"

// SendMessageRequest is the header of SEND_MESSAGE (10) with Java's long field names,
// and of SEND_MESSAGE_V2 (310) and SEND_BATCH_MESSAGE (320) with the short names a…n
// (Java's SendMessageRequestHeader and SendMessageRequestHeaderV2).
type SendMessageRequest struct {
	ProducerGroup         string          // required; V2 "a"
	Topic                 string          // required; V2 "b"
	DefaultTopic          string          // required; V2 "c" (normally "TBW102")
	DefaultTopicQueueNums int32           // required; V2 "d"
	QueueID               int32           // required; V2 "e"
	SysFlag               int32           // required; V2 "f": message sysFlag bits
	BornTimestamp         int64           // required; V2 "g", ms
	Flag                  int32           // required; V2 "h"
	Properties            string          // V2 "i": the properties wire form; always written
	ReconsumeTimes        int32           // V2 "j"; always written
	UnitMode              bool            // V2 "k"; always written
	MaxReconsumeTimes     Optional[int32] // V2 "l"
	Batch                 bool            // V2 "m"; always written
	BrokerName            string          // V1 "bname", V2 "n"; omitted when empty
}

// Encode returns the SEND_MESSAGE ext fields (long names).
func (h *SendMessageRequest) Encode() remoting.Fields {
	e := newFieldEncoder(14)
	e.str("producerGroup", h.ProducerGroup)
	e.str("topic", h.Topic)
	e.str("defaultTopic", h.DefaultTopic)
	e.int32("defaultTopicQueueNums", h.DefaultTopicQueueNums)
	e.int32("queueId", h.QueueID)
	e.int32("sysFlag", h.SysFlag)
	e.int64("bornTimestamp", h.BornTimestamp)
	e.int32("flag", h.Flag)
	e.str("properties", h.Properties)
	e.int32("reconsumeTimes", h.ReconsumeTimes)
	e.boolean("unitMode", h.UnitMode)
	e.optInt32("maxReconsumeTimes", h.MaxReconsumeTimes)
	e.boolean("batch", h.Batch)
	e.strOpt("bname", h.BrokerName)
	return e.done()
}

// EncodeV2 returns the SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE ext fields (short names).
func (h *SendMessageRequest) EncodeV2() remoting.Fields {
	e := newFieldEncoder(14)
	e.str("a", h.ProducerGroup)
	e.str("b", h.Topic)
	e.str("c", h.DefaultTopic)
	e.int32("d", h.DefaultTopicQueueNums)
	e.int32("e", h.QueueID)
	e.int32("f", h.SysFlag)
	e.int64("g", h.BornTimestamp)
	e.int32("h", h.Flag)
	e.str("i", h.Properties)
	e.int32("j", h.ReconsumeTimes)
	e.boolean("k", h.UnitMode)
	e.optInt32("l", h.MaxReconsumeTimes)
	e.boolean("m", h.Batch)
	e.strOpt("n", h.BrokerName)
	return e.done()
}

// Decode reads a SEND_MESSAGE header (long names) from f.
func (h *SendMessageRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "SendMessageRequest"}
	*h = SendMessageRequest{
		ProducerGroup:         d.str("producerGroup", true),
		Topic:                 d.str("topic", true),
		DefaultTopic:          d.str("defaultTopic", true),
		DefaultTopicQueueNums: d.int32("defaultTopicQueueNums", true),
		QueueID:               d.int32("queueId", true),
		SysFlag:               d.int32("sysFlag", true),
		BornTimestamp:         d.int64("bornTimestamp", true),
		Flag:                  d.int32("flag", true),
		Properties:            d.str("properties", false),
		ReconsumeTimes:        d.int32("reconsumeTimes", false),
		UnitMode:              d.boolean("unitMode", false),
		MaxReconsumeTimes:     d.optInt32("maxReconsumeTimes"),
		Batch:                 d.boolean("batch", false),
		BrokerName:            d.str("bname", false),
	}
	return d.err
}

// DecodeV2 reads a SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE header from f: the short
// names, each falling back to its long name as Java's decoder does. A missing required
// field is reported as "a/producerGroup".
func (h *SendMessageRequest) DecodeV2(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "SendMessageRequestV2", alt: sendV2LongName}
	*h = SendMessageRequest{
		ProducerGroup:         d.str("a", true),
		Topic:                 d.str("b", true),
		DefaultTopic:          d.str("c", true),
		DefaultTopicQueueNums: d.int32("d", true),
		QueueID:               d.int32("e", true),
		SysFlag:               d.int32("f", true),
		BornTimestamp:         d.int64("g", true),
		Flag:                  d.int32("h", true),
		Properties:            d.str("i", false),
		ReconsumeTimes:        d.int32("j", false),
		UnitMode:              d.boolean("k", false),
		MaxReconsumeTimes:     d.optInt32("l"),
		Batch:                 d.boolean("m", false),
		BrokerName:            d.str("n", false),
	}
	return d.err
}

// sendV2LongName maps a SEND_MESSAGE_V2 short name to the long name Java falls back to.
func sendV2LongName(short string) string {
	switch short {
	case "a":
		return "producerGroup"
	case "b":
		return "topic"
	case "c":
		return "defaultTopic"
	case "d":
		return "defaultTopicQueueNums"
	case "e":
		return "queueId"
	case "f":
		return "sysFlag"
	case "g":
		return "bornTimestamp"
	case "h":
		return "flag"
	case "i":
		return "properties"
	case "j":
		return "reconsumeTimes"
	case "k":
		return "unitMode"
	case "l":
		return "maxReconsumeTimes"
	case "m":
		return "batch"
	case "n":
		return "brokerName"
	}
	return ""
}

// IsSendV2 reports whether a send request with this code uses the short field names.
func IsSendV2(code int32) bool {
	return code == RequestSendMessageV2 || code == RequestSendBatchMessage || code == RequestSendReplyMessageV2
}

// EncodeFor returns the ext fields for a send request with the given code: short names
// for SEND_MESSAGE_V2, SEND_BATCH_MESSAGE and SEND_REPLY_MESSAGE_V2, long names
// otherwise.
func (h *SendMessageRequest) EncodeFor(code int32) remoting.Fields {
	if IsSendV2(code) {
		return h.EncodeV2()
	}
	return h.Encode()
}

// DecodeFor reads the header of a send request with the given code (see EncodeFor).
func (h *SendMessageRequest) DecodeFor(code int32, f remoting.Fields) error {
	if IsSendV2(code) {
		return h.DecodeV2(f)
	}
	return h.Decode(f)
}

// SendMessageResponse is the header of a SUCCESS answer to a send (Java's
// SendMessageResponseHeader plus the MSG_REGION and TRACE_ON fields the broker adds).
type SendMessageResponse struct {
	MsgID         string         // required: the offsetMsgId; comma-separated for a batch
	QueueID       int32          // required
	QueueOffset   int64          // required: the first one for a batch
	TransactionID string         // omitted when empty
	MsgRegion     string         // "MSG_REGION"; omitted when empty
	TraceOn       Optional[bool] // "TRACE_ON"; Java clients read anything but "false" as on
}

// Encode returns the ext fields.
func (h *SendMessageResponse) Encode() remoting.Fields {
	e := newFieldEncoder(6)
	e.str("msgId", h.MsgID)
	e.int32("queueId", h.QueueID)
	e.int64("queueOffset", h.QueueOffset)
	e.strOpt("transactionId", h.TransactionID)
	e.strOpt("MSG_REGION", h.MsgRegion)
	e.optBool("TRACE_ON", h.TraceOn)
	return e.done()
}

// Decode reads the header from f.
func (h *SendMessageResponse) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "SendMessageResponse"}
	*h = SendMessageResponse{
		MsgID:         d.str("msgId", true),
		QueueID:       d.int32("queueId", true),
		QueueOffset:   d.int64("queueOffset", true),
		TransactionID: d.str("transactionId", false),
		MsgRegion:     d.str("MSG_REGION", false),
		TraceOn:       d.optBool("TRACE_ON"),
	}
	return d.err
}

// ConsumerSendMsgBackRequest is the header of CONSUMER_SEND_MSG_BACK (36). It must go
// to the master of the broker that stores the message: the broker finds the message by
// its commit-log offset.
type ConsumerSendMsgBackRequest struct {
	Offset            int64           // required: the message's commit-log offset
	Group             string          // required: the consumer group
	DelayLevel        int32           // required: 0 broker decides, -1 dead letter, >0 a level
	OriginMsgID       string          // omitted when empty
	OriginTopic       string          // omitted when empty
	UnitMode          bool            // always written
	MaxReconsumeTimes Optional[int32] // honoured by brokers for clients of version ≥ V3_4_9
	BrokerName        string          // "bname"; omitted when empty
}

// Encode returns the ext fields.
func (h *ConsumerSendMsgBackRequest) Encode() remoting.Fields {
	e := newFieldEncoder(8)
	e.int64("offset", h.Offset)
	e.str("group", h.Group)
	e.int32("delayLevel", h.DelayLevel)
	e.strOpt("originMsgId", h.OriginMsgID)
	e.strOpt("originTopic", h.OriginTopic)
	e.boolean("unitMode", h.UnitMode)
	e.optInt32("maxReconsumeTimes", h.MaxReconsumeTimes)
	e.strOpt("bname", h.BrokerName)
	return e.done()
}

// Decode reads the header from f.
func (h *ConsumerSendMsgBackRequest) Decode(f remoting.Fields) error {
	d := fieldDecoder{fields: f, header: "ConsumerSendMsgBackRequest"}
	*h = ConsumerSendMsgBackRequest{
		Offset:            d.int64("offset", true),
		Group:             d.str("group", true),
		DelayLevel:        d.int32("delayLevel", true),
		OriginMsgID:       d.str("originMsgId", false),
		OriginTopic:       d.str("originTopic", false),
		UnitMode:          d.boolean("unitMode", false),
		MaxReconsumeTimes: d.optInt32("maxReconsumeTimes"),
		BrokerName:        d.str("bname", false),
	}
	return d.err
}
