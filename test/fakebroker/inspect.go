package fakebroker

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// Produced says where Produce stored a message.
type Produced struct {
	Queue           message.Queue // the queue it was stored in
	QueueOffset     int64         // its offset in that queue
	CommitLogOffset int64         // its offset in the broker's commit log
	MsgID           string        // the UNIQ_KEY
	OffsetMsgID     string        // store host and commit-log offset, as Java encodes them
}

// ConsumerInfo is what a client's last heartbeat said about one of its consumer groups.
type ConsumerInfo struct {
	ClientID         string         // the client's id, ip@instance
	Addr             string         // the client's address as the broker sees it
	Language         string         // the heartbeat frame's language, e.g. GO or JAVA
	Version          int32          // the heartbeat frame's protocol version
	ConsumeType      string         // CONSUME_PASSIVELY (push) or CONSUME_ACTIVELY
	MessageModel     string         // CLUSTERING or BROADCASTING
	ConsumeFromWhere string         // e.g. CONSUME_FROM_LAST_OFFSET
	UnitMode         bool           // Java's unit mode flag
	Subscriptions    []Subscription // the group's subscriptions
}

// Subscription is one topic subscription of a consumer group.
type Subscription struct {
	Topic           string   // the subscribed topic
	Expression      string   // "*", "a || b", or SQL92 text (Java's subString)
	ExpressionType  string   // TAG or SQL92
	Tags            []string // the expression's tags
	Codes           []int32  // their Java hash codes, which the broker filters by
	SubVersion      int64    // the subscription's version (ms); the highest wins
	ClassFilterMode bool     // Java's class filter mode flag
}

// TopicInfo is a topic's configuration on one broker.
type TopicInfo struct {
	Name        string // the topic
	ReadQueues  int    // queues consumers read
	WriteQueues int    // queues producers write
	Perm        int32  // PermRead, PermWrite and PermInherit bits
}

func toSubscription(sd *protocol.SubscriptionData) Subscription {
	return Subscription{
		Topic:           sd.Topic,
		Expression:      sd.SubString,
		ExpressionType:  sd.ExpressionType,
		Tags:            slices.Clone(sd.TagsSet),
		Codes:           slices.Clone(sd.CodeSet),
		SubVersion:      sd.SubVersion,
		ClassFilterMode: sd.ClassFilterMode,
	}
}

func consumerInfo(clientID string, sc conn, req *remoting.Command, cd *protocol.ConsumerData) ConsumerInfo {
	ci := ConsumerInfo{
		ClientID:         clientID,
		Addr:             sc.RemoteAddr(),
		Language:         req.Language.String(),
		Version:          req.Version,
		ConsumeType:      string(cd.ConsumeType),
		MessageModel:     string(cd.MessageModel),
		ConsumeFromWhere: string(cd.ConsumeFromWhere),
		UnitMode:         cd.UnitMode,
	}
	for i := range cd.SubscriptionDataSet {
		ci.Subscriptions = append(ci.Subscriptions, toSubscription(&cd.SubscriptionDataSet[i]))
	}
	return ci
}

// Produce stores messages in queue queueID of topic on this broker as a producer would,
// without a client: each gets a UNIQ_KEY unless it has one, CLUSTER is added, born and
// store host are the broker's address, and a DELAY property delays it. A negative queueID
// picks a random writable queue. The messages' own Topic is ignored. A topic the broker
// does not have is created with 4 queues when auto-creation is on.
func (b *Broker) Produce(topic string, queueID int, msgs ...*message.Message) ([]Produced, error) {
	if remark := validateTopic(topic); remark != "" {
		return nil, fmt.Errorf("fakebroker: Produce: topic %q: %s", topic, remark)
	}
	if notAllowedSendTopic(topic) {
		return nil, fmt.Errorf("fakebroker: Produce: no one may send to topic %q", topic)
	}
	out := make([]Produced, 0, len(msgs))
	var wake []*heldPull
	defer func() { b.answerHeld(wake) }()
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topics[topic]
	if t == nil {
		if !b.cfg.autoCreate {
			return nil, fmt.Errorf("fakebroker: broker %s: Produce: topic %q does not exist and auto-creation is off", b.name, topic)
		}
		t = b.setTopicLocked(topic, DefaultProduceQueueNums, DefaultProduceQueueNums, permRW)
	}
	if t.write == 0 {
		return nil, fmt.Errorf("fakebroker: broker %s: Produce: topic %q has no write queue", b.name, topic)
	}
	now := nowMillis()
	for _, m := range msgs {
		q := int32(queueID)
		if queueID < 0 {
			q = rand.Int32N(t.write)
		}
		if q >= t.write {
			return out, fmt.Errorf("fakebroker: broker %s: Produce: queue %d of topic %q does not exist (%d write queues)", b.name, q, topic, t.write)
		}
		props := parseJProps(m.Properties.String())
		uniq, ok := props.get(message.PropertyUniqKey)
		if !ok {
			uniq = b.newUniqKey()
			props.put(message.PropertyUniqKey, uniq)
		}
		props.put(propCluster, b.cfg.clusterName)
		props.del(message.PropertyWaitStoreMsgOK)
		in := &inner{
			topic:    topic,
			queueID:  q,
			body:     m.Body,
			flag:     m.Flag,
			props:    props,
			propsStr: props.String(),
			bornTs:   now,
			bornHost: b.storeHost,
		}
		res, w, err := b.putMessage(in)
		if err != nil {
			return out, fmt.Errorf("fakebroker: broker %s: Produce: %w", b.name, err)
		}
		wake = append(wake, w...)
		out = append(out, Produced{
			Queue:           message.Queue{Topic: res.topic, BrokerName: b.name, QueueID: res.queueID},
			QueueOffset:     res.queueOffset,
			CommitLogOffset: res.offset,
			MsgID:           uniq,
			OffsetMsgID:     res.msgID,
		})
	}
	return out, nil
}

// newUniqKey returns a message id in the form Java's MessageClientIDSetter makes: 32
// upper-case hex digits (address, a per-broker prefix, a time and a counter). It runs
// under b.mu.
func (b *Broker) newUniqKey() string {
	b.uniqSeq++
	a := b.storeHost.Addr().As4()
	var raw [16]byte
	copy(raw[:4], a[:])
	binary.BigEndian.PutUint16(raw[4:], uint16(b.idx))
	binary.BigEndian.PutUint32(raw[6:], uint32(b.idx+1)*0x9E3779B1)
	binary.BigEndian.PutUint32(raw[10:], uint32(time.Now().UnixMilli()))
	binary.BigEndian.PutUint16(raw[14:], uint16(b.uniqSeq))
	const digits = "0123456789ABCDEF"
	var out [32]byte
	for i, c := range raw {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out[:])
}

// Messages returns the messages of one queue, in queue-offset order, from the min
// offset. Their BrokerName is set.
func (b *Broker) Messages(topic string, queueID int) []*message.Ext {
	b.mu.Lock()
	var buf []byte
	if t := b.topics[topic]; t != nil {
		if q := t.queue(int32(queueID)); q != nil {
			buf = b.copyQueue(q, q.minOffset())
		}
	}
	b.mu.Unlock()
	return b.decode(buf)
}

// TopicMessages returns the messages of every queue of topic, queue by queue.
func (b *Broker) TopicMessages(topic string) []*message.Ext {
	b.mu.Lock()
	var buf []byte
	if t := b.topics[topic]; t != nil {
		for _, q := range t.queues {
			buf = append(buf, b.copyQueue(q, q.minOffset())...)
		}
	}
	b.mu.Unlock()
	return b.decode(buf)
}

// RetryMessages returns the messages of %RETRY%<group> whose delay has passed.
func (b *Broker) RetryMessages(group string) []*message.Ext {
	return b.TopicMessages(RetryTopic(group))
}

// DLQMessages returns the messages of %DLQ%<group>.
func (b *Broker) DLQMessages(group string) []*message.Ext {
	return b.TopicMessages(DLQTopic(group))
}

// Scheduled returns the messages waiting for their delay level (retries on their way to
// %RETRY%, messages sent with a DELAY), level by level. Their topic is
// SCHEDULE_TOPIC_XXXX; REAL_TOPIC and REAL_QID say where they will go.
func (b *Broker) Scheduled() []*message.Ext {
	b.mu.Lock()
	var buf []byte
	for _, dl := range b.delay {
		buf = append(buf, b.copyQueue(dl.q, dl.next)...)
	}
	b.mu.Unlock()
	return b.decode(buf)
}

// copyQueue copies the records of q from offset on. It runs under b.mu.
func (b *Broker) copyQueue(q *consumeQueue, from int64) []byte {
	var buf []byte
	for off := max(from, q.minOffset()); off < q.maxOffset(); off++ {
		e := q.entry(off)
		buf = append(buf, b.log.at(e.pos, e.size)...)
	}
	return buf
}

func (b *Broker) decode(buf []byte) []*message.Ext {
	msgs, _ := message.DecodeAll(buf) // the store wrote every record: they decode
	for _, m := range msgs {
		m.BrokerName = b.name
	}
	return msgs
}

// Topic returns the configuration of a topic on this broker.
func (b *Broker) Topic(name string) (TopicInfo, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topics[name]
	if t == nil {
		return TopicInfo{}, false
	}
	return TopicInfo{Name: t.name, ReadQueues: int(t.read), WriteQueues: int(t.write), Perm: t.perm}, true
}

// Topics returns the names of the topics on this broker, sorted.
func (b *Broker) Topics() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.topics))
	for n := range b.topics {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// MinOffset returns the min offset of a queue (0 for a queue that does not exist).
func (b *Broker) MinOffset(topic string, queueID int) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.minOffsetLocked(topic, int32(queueID))
}

// MaxOffset returns the max offset of a queue: the offset its next message gets.
func (b *Broker) MaxOffset(topic string, queueID int) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.maxOffsetLocked(topic, int32(queueID))
}

// TruncateQueue makes the messages of a queue below minOffset unreachable, as if the
// broker had deleted the commit-log files holding them: pulls below it get
// OFFSET_TOO_SMALL, and QUERY_CONSUMER_OFFSET for a group without an offset gets
// QUERY_NOT_FOUND once minOffset > 0.
func (b *Broker) TruncateQueue(topic string, queueID int, minOffset int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topics[topic]
	if t == nil || t.queue(int32(queueID)) == nil {
		return fmt.Errorf("fakebroker: broker %s: TruncateQueue: no queue %d of topic %q", b.name, queueID, topic)
	}
	t.queue(int32(queueID)).truncate(minOffset)
	return nil
}

// CommittedOffset returns the offset group committed for a queue.
func (b *Broker) CommittedOffset(group, topic string, queueID int) (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	off, ok := b.offsets[offsetKey{group: group, topic: topic, queue: int32(queueID)}]
	return off, ok
}

// CommittedOffsets returns every offset group committed on this broker.
func (b *Broker) CommittedOffsets(group string) map[message.Queue]int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[message.Queue]int64)
	for k, v := range b.offsets {
		if k.group == group {
			out[message.Queue{Topic: k.topic, BrokerName: b.name, QueueID: k.queue}] = v
		}
	}
	return out
}

// SetCommittedOffset stores an offset for group, as UPDATE_CONSUMER_OFFSET does.
func (b *Broker) SetCommittedOffset(group, topic string, queueID int, offset int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.commitOffset(group, topic, int32(queueID), offset)
}

// Clients returns the client ids of the group's members, in join order: what
// GET_CONSUMER_LIST_BY_GROUP answers.
func (b *Broker) Clients(group string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if g := b.groups[group]; g != nil {
		return g.clientIDs()
	}
	return nil
}

// Groups returns the consumer groups with members, sorted.
func (b *Broker) Groups() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.groups))
	for n := range b.groups {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Subscriptions returns the group's subscription table (per topic, the one with the
// highest subVersion), sorted by topic.
func (b *Broker) Subscriptions(group string) []Subscription {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.groups[group]
	if g == nil {
		return nil
	}
	out := make([]Subscription, 0, len(g.subs))
	for _, s := range g.subs {
		out = append(out, toSubscription(&s.data))
	}
	slices.SortFunc(out, func(a, b Subscription) int { return strings.Compare(a.Topic, b.Topic) })
	return out
}

// LastHeartbeat returns what the last heartbeat that named group said about it. It is
// kept after the client leaves.
func (b *Broker) LastHeartbeat(group string) (ConsumerInfo, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ci, ok := b.lastHB[group]
	return ci, ok
}

// Locks returns the unexpired queue locks of group: queue → client id.
func (b *Broker) Locks(group string) map[message.Queue]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[message.Queue]string)
	now := time.Now()
	for mq, e := range b.locks[group] {
		if now.Sub(e.last) <= b.cfg.lockExpiry {
			out[mq] = e.clientID
		}
	}
	return out
}

// GiveLock hands group's lock of q to clientID, whoever held it, as if the holder's
// lock had expired and clientID had taken it: the holder's next renewal is refused.
func (b *Broker) GiveLock(group string, q message.Queue, clientID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	gl := b.locks[group]
	if gl == nil {
		gl = make(map[message.Queue]*lockEntry)
		b.locks[group] = gl
	}
	if e := gl[q]; e != nil {
		e.clientID, e.last = clientID, time.Now()
		return
	}
	gl[q] = &lockEntry{clientID: clientID, last: time.Now()}
	b.lockCount++
}

// HeldPulls returns how many long polls the broker holds now, pops included.
func (b *Broker) HeldPulls() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.held) + len(b.pop.held)
}
