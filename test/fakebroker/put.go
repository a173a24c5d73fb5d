package fakebroker

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/rmqpush/rmqpush/message"
)

// inner is a message on its way into the store (Java's MessageExtBrokerInner).
type inner struct {
	topic     string
	queueID   int32
	body      []byte
	flag      int32
	props     *jprops
	propsStr  string // what is stored, as set by setPropertiesString before the put
	sysFlag   int32
	bornTs    int64
	bornHost  netip.AddrPort
	storeHost netip.AddrPort // zero: the broker's
	reconsume int32
}

// putResult is where a message was stored.
type putResult struct {
	topic       string
	queueID     int32
	queueOffset int64
	offset      int64 // commit-log offset
	storeTs     int64
	msgID       string // the offsetMsgId
}

// Errors of putMessage, as PutMessageStatus names them.
var (
	errMessageIllegal   = errors.New("MESSAGE_ILLEGAL")
	errPropertiesTooBig = errors.New("PROPERTIES_SIZE_EXCEEDED")
)

// putMessage stores m (CommitLog.putMessage): a message with a delay level goes to the
// schedule queue of its level with REAL_TOPIC and REAL_QID set, to come back when its
// delay has passed; any other goes to its topic queue, waking the long polls waiting on
// it, which it returns for the caller to answer once the mutex is released. It runs
// under b.mu.
func (b *Broker) putMessage(m *inner) (putResult, []*heldPull, error) {
	if len(m.topic) > message.MaxTopicLengthV1 {
		return putResult{}, nil, errMessageIllegal
	}
	tran := m.sysFlag & message.SysFlagTransactionMask
	var dl *delayLevel
	if tran == 0 || tran == message.SysFlagTransactionCommit {
		level := 0
		if v, ok := m.props.get(propDelay); ok {
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return putResult{}, nil, fmt.Errorf("java.lang.NumberFormatException: For input string: %q (property DELAY)", v)
			}
			level = int(n)
		}
		if level > 0 {
			if level > len(b.delay) {
				level = len(b.delay)
				m.props.put(propDelay, strconv.Itoa(level))
			}
			dl = b.delay[level-1]
			m.props.put(propRealTopic, m.topic)
			m.props.put(propRealQueueID, strconv.Itoa(int(m.queueID)))
			m.propsStr = m.props.String()
		}
	}
	var q *consumeQueue
	tags := int32(0)
	if dl != nil {
		q = dl.q
	} else {
		t := b.topics[m.topic]
		if t == nil {
			return putResult{}, nil, fmt.Errorf("topic %s does not exist on broker %s", m.topic, b.name)
		}
		if q = t.queue(m.queueID); q == nil {
			return putResult{}, nil, fmt.Errorf("queue %d of topic %s does not exist on broker %s", m.queueID, m.topic, b.name)
		}
		if v, ok := m.props.get(message.PropertyTags); ok {
			tags = tagsCode(v)
		}
	}
	if len(m.propsStr) > message.MaxPropertiesLength {
		return putResult{}, nil, errPropertiesTooBig
	}
	storeHost := m.storeHost
	if !storeHost.IsValid() {
		storeHost = b.storeHost
	}
	ext := &message.Ext{
		Message: message.Message{
			Topic:      q.topic,
			Flag:       m.flag,
			Body:       m.body,
			Properties: message.PropertiesFromWire(m.propsStr),
		},
		QueueID:        q.id,
		QueueOffset:    q.maxOffset(),
		SysFlag:        m.sysFlag,
		BornTimestamp:  m.bornTs,
		BornHost:       m.bornHost,
		StoreTimestamp: nowMillis(),
		StoreHost:      storeHost,
		ReconsumeTimes: m.reconsume,
	}
	if recordSize(ext, len(m.propsStr)) > b.cfg.maxMessageSize {
		return putResult{}, nil, errMessageIllegal
	}
	offset, rec, err := b.log.append(ext, len(m.propsStr))
	if err != nil {
		return putResult{}, nil, fmt.Errorf("%w: %v", errMessageIllegal, err)
	}
	q.entries = append(q.entries, cqEntry{pos: offset, size: int32(len(rec)), tags: tags})
	q.lastTs = ext.StoreTimestamp
	res := putResult{topic: q.topic, queueID: q.id, queueOffset: ext.QueueOffset, offset: offset,
		storeTs: ext.StoreTimestamp, msgID: message.OffsetMsgID(storeHost, offset)}
	if dl != nil {
		b.armDelay(dl)
		return res, nil, nil
	}
	return res, b.arrived(q, tags, m.props), nil
}

// recordSize is the size of m's store record.
func recordSize(m *message.Ext, propsLen int) int {
	n := 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 4 + 8 + 4 + len(m.Body) + 1 + len(m.Topic) + 2 + propsLen
	if a := m.BornHost.Addr(); a.IsValid() && !a.Is4() {
		n += 12
	}
	if a := m.StoreHost.Addr(); a.IsValid() && !a.Is4() {
		n += 12
	}
	return n
}

// Property names the broker sets.
const (
	propDelay       = message.PropertyDelayTimeLevel
	propRealTopic   = message.PropertyRealTopic
	propRealQueueID = message.PropertyRealQueueID
	propCluster     = message.PropertyCluster
)
