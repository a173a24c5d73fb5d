package msgtrace

import (
	"strconv"
)

// Separators of Java's TraceConstants: CONTENT_SPLITOR between the fields of a record,
// FIELD_SPLITOR after each record (the last one included).
const (
	FieldSeparator  = '\x01'
	RecordSeparator = '\x02'
)

// Record types, as Java's TraceType names them.
const (
	TypeSubBefore = "SubBefore"
	TypeSubAfter  = "SubAfter"
)

// DefaultTopic is the trace topic of brokers started with traceTopicEnable=true (Java
// MixAll.RMQ_SYS_TRACE_TOPIC).
const DefaultTopic = "RMQ_SYS_TRACE_TOPIC"

// Java writes a null String field as "null": a message without keys or a region.
const javaNull = "null"

// SubBefore is the record written just before a listener call, one per message (Java
// ConsumeMessageTraceHookImpl.consumeMessageBefore; TraceDataEncoder, 8 fields).
type SubBefore struct {
	Timestamp  int64  // ms since the epoch, when the call began
	RegionID   string // the message's MSG_REGION property ("" writes Java's "null")
	Group      string // the consumer group
	RequestID  string // the call's id, shared by its SubAfter records
	MsgID      string // the message's id (UNIQ_KEY, else the offset message id)
	RetryTimes int32  // the message's reconsume times
	Keys       string // the message's KEYS property, as stored ("" writes "null")
}

// SubAfter is the record written after a listener call, one per message (Java
// consumeMessageAfter; 9 fields).
type SubAfter struct {
	RequestID   string // the SubBefore's request id
	MsgID       string // the message's id
	CostMillis  int64  // the call's duration divided by its number of messages, in ms
	Success     bool   // the listener returned success
	Keys        string // the message's KEYS property ("" writes "null")
	ContextCode int    // Java's ConsumeReturnType ordinal: 0 SUCCESS, 1 TIME_OUT, 2 EXCEPTION, 3 RETURNNULL, 4 FAILED
	Timestamp   int64  // ms since the epoch, when the call ended
	Group       string // the consumer group
}

func orNull(s string) string {
	if s == "" {
		return javaNull
	}
	return s
}

// Append appends the record in Java's TraceDataEncoder format.
func (r *SubBefore) Append(b []byte) []byte {
	b = append(b, TypeSubBefore...)
	b = append(append(b, FieldSeparator), strconv.FormatInt(r.Timestamp, 10)...)
	b = append(append(b, FieldSeparator), orNull(r.RegionID)...)
	b = append(append(b, FieldSeparator), r.Group...)
	b = append(append(b, FieldSeparator), r.RequestID...)
	b = append(append(b, FieldSeparator), r.MsgID...)
	b = append(append(b, FieldSeparator), strconv.FormatInt(int64(r.RetryTimes), 10)...)
	b = append(append(b, FieldSeparator), orNull(r.Keys)...)
	return append(b, RecordSeparator)
}

// Append appends the record in Java's TraceDataEncoder format.
func (r *SubAfter) Append(b []byte) []byte {
	b = append(b, TypeSubAfter...)
	b = append(append(b, FieldSeparator), r.RequestID...)
	b = append(append(b, FieldSeparator), r.MsgID...)
	b = append(append(b, FieldSeparator), strconv.FormatInt(r.CostMillis, 10)...)
	b = append(append(b, FieldSeparator), strconv.FormatBool(r.Success)...)
	b = append(append(b, FieldSeparator), orNull(r.Keys)...)
	b = append(append(b, FieldSeparator), strconv.Itoa(r.ContextCode)...)
	b = append(append(b, FieldSeparator), strconv.FormatInt(r.Timestamp, 10)...)
	b = append(append(b, FieldSeparator), r.Group...)
	return append(b, RecordSeparator)
}
