package fakebroker

import (
	"strconv"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
)

// POP consumption as a 5.3.3 broker keeps it (PopMessageProcessor, PopBufferMergeService,
// AckMessageProcessor, ChangeInvisibleTimeProcessor, PopReviveService), in memory:
//
//   - per group, topic and queue, the offset the next pop reads from (the "buffer
//     offset", which runs ahead of the committed consumer offset), starting where the
//     group's committed offset is, or where the pop's init mode says for a new group;
//   - per pop of a queue, a checkpoint: where the pop started, the offsets it returned,
//     its pop time and invisible time, its revive queue, and which offsets were acked;
//   - the revive: when a checkpoint's invisible time is over, each message of it not
//     acked is written to the group's POP retry topic, %RETRY%<group>_<topic> (1 queue,
//     created then), with one more reconsume time and 1ST_POP_TIME; a checkpoint of the
//     retry topic itself is revived into it again. An ack that comes after the revive
//     changes nothing (the broker still answers SUCCESS);
//   - the committed offset of a queue follows its checkpoints: once the oldest are done
//     (every message acked or revived) it moves to the start of the oldest left, or to
//     the buffer offset;
//   - CHANGE_MESSAGE_INVISIBLETIME acks the message's old handle and writes a checkpoint
//     of that one message, popped now for the new invisible time; such a checkpoint does
//     not hold the committed offset (5.3.3 puts it straight into the revive topic).
//
// A real broker revives a checkpoint up to a couple of seconds after its invisible time
// (the revive service scans the revive topic; golden p_pop_533 shows 2 s); here it is
// revived on time, or WithPopReviveDelay later. Everything here is guarded by b.mu.

// reviveQueueNum is BrokerConfig.reviveQueueNum: pops spread their checkpoints over this
// many revive queues (reviveQid in the answers).
const reviveQueueNum = 8

// popFromRetryProbability is BrokerConfig.popFromRetryProbability: the percentage of pops
// that read the POP retry topic before the topic itself.
const popFromRetryProbability = 20

// maxCheckpoints bounds the checkpoints a broker keeps; beyond it pops are refused with
// SYSTEM_ERROR, where a real broker would keep writing to its revive topic.
const maxCheckpoints = 1 << 20

// maxHeldPops is BrokerConfig.maxPopPollingSize: pops held at once; beyond it a pop
// that finds nothing is answered POLLING_FULL.
const maxHeldPops = 100000

// popRetryQueueNum is PopAckConstants.retryQueueNum: the queues of a POP retry topic.
const popRetryQueueNum = 1

// popKey names the pop state of one queue of a topic (or of a POP retry topic) for a group.
type popKey struct {
	group, topic string
	queue        int32
}

// popQueue is the pop state of one queue for one group.
type popQueue struct {
	next int64         // the buffer offset: where the next pop reads; -1 before the first
	cks  []*checkpoint // the pops' checkpoints not done yet, oldest first
}

// checkpoint is one pop of one queue (Java's PopCheckPoint).
type checkpoint struct {
	key       popKey
	start     int64   // where the pop started
	offsets   []int64 // the offsets it returned
	acked     []bool
	nAcked    int
	popTime   int64 // ms
	invisible int64 // ms
	reviveQID int32
	holds     bool // it holds the committed offset until done (not a changed invisible time)
	done      bool // every message acked or revived
}

func (ck *checkpoint) reviveAt() int64 { return ck.popTime + ck.invisible }

// ckID finds the checkpoint of a handle: the pop's queue, start and pop time.
type ckID struct {
	key     popKey
	start   int64
	popTime int64
}

// modeEntry is the request mode of a group on a topic (SET_MESSAGE_REQUEST_MODE).
type modeEntry struct {
	mode  protocol.MessageRequestMode
	share int32 // popShareQueueNum
}

// popState is a broker's POP state.
type popState struct {
	queues     map[popKey]*popQueue
	byID       map[ckID]*checkpoint
	pending    int   // checkpoints not done
	reviveTask *task // the next revive; nil when none is armed
	reviveAt   int64 // when it runs (ms)
	seq        uint64
	modes      map[string]map[string]modeEntry // topic → group → mode
	held       map[*heldPop]struct{}
}

func newPopState() popState {
	return popState{
		queues: make(map[popKey]*popQueue),
		byID:   make(map[ckID]*checkpoint),
		modes:  make(map[string]map[string]modeEntry),
		held:   make(map[*heldPop]struct{}),
	}
}

// popQueueOf returns the pop state of key, created on first use. It runs under b.mu.
func (b *Broker) popQueueOf(key popKey) *popQueue {
	pq := b.pop.queues[key]
	if pq == nil {
		pq = &popQueue{next: -1}
		b.pop.queues[key] = pq
	}
	return pq
}

// addCheckpoint records a pop of key's queue and arms the revive. It runs under b.mu.
func (b *Broker) addCheckpoint(ck *checkpoint) {
	ck.acked = make([]bool, len(ck.offsets))
	id := ckID{key: ck.key, start: ck.start, popTime: ck.popTime}
	if old := b.pop.byID[id]; old != nil && !old.done {
		// The same message's invisible time changed twice within a millisecond: the
		// newer checkpoint stands for it.
		b.finish(old)
	}
	b.pop.byID[id] = ck
	b.pop.pending++
	if ck.holds {
		pq := b.popQueueOf(ck.key)
		pq.cks = append(pq.cks, ck)
	}
	b.armRevive(ck.reviveAt())
}

// ack marks the offset of a handle acked; it reports whether a checkpoint still waited
// for it. It runs under b.mu.
func (b *Broker) ack(key popKey, start, popTime, offset int64) bool {
	ck := b.pop.byID[ckID{key: key, start: start, popTime: popTime}]
	if ck == nil || ck.done {
		return false // revived already, or never popped: the ack changes nothing
	}
	for i, o := range ck.offsets {
		if o == offset && !ck.acked[i] {
			ck.acked[i] = true
			if ck.nAcked++; ck.nAcked == len(ck.offsets) {
				b.finish(ck)
			}
			return true
		}
	}
	return false
}

// finish marks ck done and moves its queue's committed offset past the checkpoints
// done. It runs under b.mu.
func (b *Broker) finish(ck *checkpoint) {
	if ck.done {
		return
	}
	ck.done = true
	b.pop.pending--
	id := ckID{key: ck.key, start: ck.start, popTime: ck.popTime}
	if b.pop.byID[id] == ck {
		delete(b.pop.byID, id)
	}
	if !ck.holds {
		return
	}
	pq := b.pop.queues[ck.key]
	for len(pq.cks) > 0 && pq.cks[0].done {
		pq.cks[0] = nil
		pq.cks = pq.cks[1:]
	}
	committed := pq.next
	if len(pq.cks) > 0 {
		committed = pq.cks[0].start
	}
	b.commitPopOffset(ck.key, committed)
}

// commitPopOffset stores a pop queue's committed offset, never moving it back. It runs
// under b.mu.
func (b *Broker) commitPopOffset(key popKey, offset int64) {
	k := offsetKey{group: key.group, topic: key.topic, queue: key.queue}
	if stored, ok := b.offsets[k]; ok && stored >= offset {
		return
	}
	b.commitOffset(key.group, key.topic, key.queue, offset)
}

// armRevive makes sure a revive runs at at (ms) or earlier. It runs under b.mu.
func (b *Broker) armRevive(at int64) {
	if b.pop.reviveTask != nil && b.pop.reviveAt <= at {
		return
	}
	b.c.sched.cancel(b.pop.reviveTask)
	gen := b.runGen
	b.pop.reviveAt = at
	delay := time.Duration(at-nowMillis())*time.Millisecond + b.cfg.popReviveDelay
	b.pop.reviveTask = b.c.sched.after(delay, func() { b.revive(gen) })
}

// armReviveAll arms the revive of the checkpoints a restarted broker kept. It runs
// under b.mu.
func (b *Broker) armReviveAll() {
	next := int64(-1)
	for _, ck := range b.pop.byID {
		if next < 0 || ck.reviveAt() < next {
			next = ck.reviveAt()
		}
	}
	if next >= 0 {
		b.armRevive(next)
	}
}

// revive revives every checkpoint whose invisible time is over, and arms the next.
func (b *Broker) revive(gen uint64) {
	b.mu.Lock()
	if gen != b.runGen {
		b.mu.Unlock()
		return // armed by a run that ended; Start arms it again
	}
	b.pop.reviveTask = nil
	now := nowMillis() - b.cfg.popReviveDelay.Milliseconds()
	next := int64(-1)
	var due []*checkpoint
	for _, ck := range b.pop.byID {
		switch {
		case ck.reviveAt() <= now:
			due = append(due, ck)
		case next < 0 || ck.reviveAt() < next:
			next = ck.reviveAt()
		}
	}
	for _, ck := range due {
		b.reviveCheckpoint(ck)
	}
	if next >= 0 {
		b.armRevive(next)
	}
	b.mu.Unlock()
}

// reviveCheckpoint writes the messages of ck nobody acked to the POP retry topic
// (PopReviveService.reviveRetry) and finishes ck. It runs under b.mu.
func (b *Broker) reviveCheckpoint(ck *checkpoint) {
	retry := ck.key.topic
	if !isRetryTopic(retry) {
		retry = protocol.PopRetryTopic(ck.key.topic, ck.key.group)
	}
	for i, off := range ck.offsets {
		if ck.acked[i] {
			continue
		}
		t := b.topics[ck.key.topic]
		if t == nil {
			break
		}
		q := t.queue(ck.key.queue)
		if q == nil || off < q.minOffset() || off >= q.maxOffset() {
			continue // deleted meanwhile
		}
		e := q.entry(off)
		orig, ok := parseRecord(b.log.at(e.pos, e.size))
		if !ok {
			continue
		}
		if b.addPopRetryTopic(retry, ck.key.group) == nil {
			continue
		}
		props := copyJProps5(parseJProps5(orig.props))
		if _, ok := props.get(protocol.PropertyFirstPopTime); orig.reconsumeTimes == 0 || !ok {
			props.put(protocol.PropertyFirstPopTime, strconv.FormatInt(ck.popTime, 10))
		}
		in := &inner{
			topic:     retry,
			body:      orig.body,
			flag:      orig.flag,
			props:     props,
			propsStr:  props.String(),
			sysFlag:   orig.sysFlag,
			bornTs:    orig.bornTs,
			bornHost:  b.storeHost,
			reconsume: orig.reconsumeTimes + 1,
		}
		if _, wake, err := b.putMessage(in); err == nil && len(wake) > 0 {
			b.c.sched.after(0, func() { b.answerHeld(wake) })
		}
	}
	b.finish(ck)
}

// isRetryTopic reports whether topic is a retry topic (%RETRY%...).
func isRetryTopic(topic string) bool {
	return len(topic) >= len(retryPrefix) && topic[:len(retryPrefix)] == retryPrefix
}

// addPopRetryTopic creates a POP retry topic (PopReviveService.addRetryTopicIfNotExist:
// 1 queue, perm RW) with the group's offset at 0. It runs under b.mu.
func (b *Broker) addPopRetryTopic(topic, group string) *topicConfig {
	if t := b.topics[topic]; t != nil {
		return t
	}
	if len(b.topics) >= maxTopics {
		return nil
	}
	t := newTopicConfig(topic, popRetryQueueNum, popRetryQueueNum, permRW, 0)
	b.topics[topic] = t
	if _, ok := b.offsets[offsetKey{group: group, topic: topic, queue: 0}]; !ok {
		b.commitOffset(group, topic, 0, 0)
	}
	return t
}

// requestMode returns the mode of group on topic (QueryAssignmentProcessor): what
// SET_MESSAGE_REQUEST_MODE set, else PULL (the default defaultMessageRequestMode), and
// always PULL for a retry topic. It runs under b.mu.
func (b *Broker) requestMode(topic, group string) modeEntry {
	if !isRetryTopic(topic) {
		if m, ok := b.pop.modes[topic][group]; ok {
			return m
		}
	}
	return modeEntry{mode: protocol.RequestModePull}
}

// SetConsumeMode sets how group consumes topic on this broker when the broker assigns
// queues (QUERY_ASSIGNMENT), as mqadmin setConsumeMode does with SET_MESSAGE_REQUEST_MODE:
// POP or PULL, and for POP how many other members' queues each member pops too
// (popShareQueueNum; 0, or at least the number of members less one, makes every member
// pop every queue). A retry topic, or a topic the broker does not have, is refused.
func (b *Broker) SetConsumeMode(group, topic string, mode protocol.MessageRequestMode, popShareQueueNum int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	code, remark := b.setRequestMode(&protocol.SetMessageRequestModeRequest{Topic: topic, ConsumerGroup: group,
		Mode: mode, PopShareQueueNum: int32(popShareQueueNum)})
	if code != protocol.ResponseSuccess {
		return &modeError{broker: b.name, code: code, remark: remark}
	}
	return nil
}

type modeError struct {
	broker string
	code   int32
	remark string
}

func (e *modeError) Error() string {
	return "fakebroker: broker " + e.broker + ": set consume mode: " + protocol.ResponseName(e.code) + ": " + e.remark
}

// setRequestMode is QueryAssignmentProcessor.setMessageRequestMode. It runs under b.mu.
func (b *Broker) setRequestMode(r *protocol.SetMessageRequestModeRequest) (int32, string) {
	if isRetryTopic(r.Topic) {
		return protocol.ResponseNoPermission, "retry topic is not allowed to set mode"
	}
	if b.topics[r.Topic] == nil {
		return protocol.ResponseTopicNotExist, "topic[" + r.Topic + "] not exist"
	}
	if r.Mode != protocol.RequestModePop && r.Mode != protocol.RequestModePull {
		return protocol.ResponseSystemError, "unknown mode " + string(r.Mode)
	}
	groups := b.pop.modes[r.Topic]
	if groups == nil {
		if len(b.pop.modes) >= maxTopics {
			return protocol.ResponseSystemError, "fakebroker: too many topics with a request mode"
		}
		groups = make(map[string]modeEntry)
		b.pop.modes[r.Topic] = groups
	}
	if _, ok := groups[r.ConsumerGroup]; !ok && len(groups) >= maxGroups {
		return protocol.ResponseSystemError, "fakebroker: too many groups with a request mode"
	}
	groups[r.ConsumerGroup] = modeEntry{mode: r.Mode, share: r.PopShareQueueNum}
	return protocol.ResponseSuccess, ""
}

// InflightPops returns, per queue of group (the POP retry topic's included), the
// messages popped and neither acked nor revived yet.
func (b *Broker) InflightPops(group string) map[message.Queue]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[message.Queue]int{}
	for _, ck := range b.pop.byID {
		if ck.key.group != group || ck.done {
			continue
		}
		q := message.Queue{Topic: ck.key.topic, BrokerName: b.name, QueueID: ck.key.queue}
		out[q] += len(ck.offsets) - ck.nAcked
	}
	return out
}

// PopRetryMessages returns the messages of group's POP retry topic of topic,
// %RETRY%<group>_<topic>.
func (b *Broker) PopRetryMessages(group, topic string) []*message.Ext {
	return b.TopicMessages(protocol.PopRetryTopic(topic, group))
}
