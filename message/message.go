package message

import (
	"net/netip"
	"strings"
	"time"
)

// Property names the broker and clients give meaning to.
const (
	PropertyTags                = "TAGS"
	PropertyKeys                = "KEYS"
	PropertyUniqKey             = "UNIQ_KEY"
	PropertyWaitStoreMsgOK      = "WAIT"
	PropertyDelayTimeLevel      = "DELAY"
	PropertyRetryTopic          = "RETRY_TOPIC"
	PropertyRealTopic           = "REAL_TOPIC"
	PropertyRealQueueID         = "REAL_QID"
	PropertyTransactionPrepared = "TRAN_MSG"
	PropertyProducerGroup       = "PGROUP"
	PropertyMinOffset           = "MIN_OFFSET"
	PropertyMaxOffset           = "MAX_OFFSET"
	PropertyOriginMessageID     = "ORIGIN_MESSAGE_ID"
	PropertyReconsumeTime       = "RECONSUME_TIME"
	PropertyMaxReconsumeTimes   = "MAX_RECONSUME_TIMES"
	PropertyConsumeStartTime    = "CONSUME_START_TIME"
	PropertyCluster             = "CLUSTER"
	PropertyShardingKey         = "__SHARDINGKEY"
	PropertyTraceSwitch         = "TRACE_ON"
	PropertyMsgRegion           = "MSG_REGION"
	PropertyInnerNum            = "INNER_NUM"
	PropertyInnerBase           = "INNER_BASE"
	PropertyInstanceID          = "INSTANCE_ID" // the sending client's namespace
)

// KeySeparator separates the keys of the KEYS property.
const KeySeparator = " "

// Message is a message as a producer builds it: a topic, a body, a flag the broker
// stores but never reads, and properties.
type Message struct {
	Topic      string     // the topic it is sent to (for a retry, the original topic)
	Flag       int32      // the application's flag; stored, never read by the broker
	Body       []byte     // the payload, decompressed
	Properties Properties // tags, keys, UNIQ_KEY and the application's properties
}

// Tags returns the TAGS property ("" when the message has none).
func (m *Message) Tags() string { return m.Properties.Value(PropertyTags) }

// Keys returns the keys of the KEYS property, which holds them separated by spaces.
func (m *Message) Keys() []string {
	v := m.Properties.Value(PropertyKeys)
	if v == "" {
		return nil
	}
	return strings.Fields(v)
}

// Property returns the named property, or "" when it is absent.
func (m *Message) Property(name string) string { return m.Properties.Value(name) }

// Ext is a message as a consumer receives it: the Message plus every field the broker
// stored with it. Body slices into the buffer it was decoded from; a listener that keeps
// a body beyond its call may keep the slice (the buffer is never reused) but should copy
// it before changing it if other messages of the same pull are still in use. The
// consumer decodes with DecodeOwned, so Topic and the property values (MsgID included)
// point into that buffer too: whatever is kept of a message keeps the whole pulled
// buffer alive, so a listener that keeps strings of many messages for long, such as
// message ids in a deduplication set, should keep copies (strings.Clone).
type Ext struct {
	Message

	// BrokerName is the broker the message was pulled from. The decoder leaves it empty;
	// the consumer sets it.
	BrokerName string

	QueueID                   int32          // the queue of Topic on BrokerName
	StoreSize                 int32          // the stored record's length in bytes
	QueueOffset               int64          // the message's position in its queue
	SysFlag                   int32          // compression, batch and transaction bits
	BornTimestamp             int64          // ms since the Unix epoch, when the producer made it
	BornHost                  netip.AddrPort // the producer's address
	StoreTimestamp            int64          // ms since the Unix epoch, when the broker stored it
	StoreHost                 netip.AddrPort // the broker that stored it
	CommitLogOffset           int64          // its position in the broker's commit log
	BodyCRC                   int32          // CRC32 of the stored body
	ReconsumeTimes            int32          // deliveries before this one that failed
	PreparedTransactionOffset int64          // of a transactional message's half message

	// CachedAt is when a consumer's ProcessQueue cached the message after its pull (zero
	// before that): its listener call's start minus CachedAt is the time it waited in
	// the local cache (RocketMQ's await time).
	CachedAt time.Time
}

// MsgID returns the id users see: the producer's UNIQ_KEY when the message has one,
// otherwise the OffsetMsgID.
func (m *Ext) MsgID() string {
	if id, ok := m.Properties.Get(PropertyUniqKey); ok {
		return id
	}
	return m.OffsetMsgID()
}

// OffsetMsgID returns the broker-assigned id: the upper-case hex of the store host
// address, port and commit-log offset (32 digits for IPv4, 56 for IPv6).
func (m *Ext) OffsetMsgID() string { return OffsetMsgID(m.StoreHost, m.CommitLogOffset) }

// Queue returns the queue the message was pulled from (BrokerName as set by the consumer).
func (m *Ext) Queue() Queue {
	return Queue{Topic: m.Topic, BrokerName: m.BrokerName, QueueID: m.QueueID}
}

// BornTime returns BornTimestamp as a time.
func (m *Ext) BornTime() time.Time { return time.UnixMilli(m.BornTimestamp) }

// StoreTime returns StoreTimestamp as a time.
func (m *Ext) StoreTime() time.Time { return time.UnixMilli(m.StoreTimestamp) }
