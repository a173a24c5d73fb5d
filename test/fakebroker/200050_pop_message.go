package fakebroker

import (
	"math/rand/v2"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// POP_MESSAGE (200050); 5.3.3's PopMessageProcessor (the default path, without
// popConsumerKVServiceEnable), with WithRocketMQ5.
//
// Supported:
//   - the checks, codes and remarks in 5.3.3's order: POLLING_TIMEOUT when the request
//     is more than its poll time and 500 ms old (bornTime), INVALID_PARAMETER for more
//     than 32 messages, TOPIC_NOT_EXIST, NO_PERMISSION on an unreadable topic,
//     INVALID_PARAMETER for a queue id beyond the read queues; the subscription of the
//     request (TAG, or SQL92 whether or not WithPropertyFilter is on, as 5.3.3's POP
//     does not check it; SUBSCRIPTION_PARSE_FAILED when it does not parse);
//   - queue id -1 pops every read queue of the topic, starting at a random one, until
//     maxMsgNums; a queue id pops that queue. The group's POP retry topic
//     (%RETRY%<group>_<topic>) is read first in 20 % of pops (popFromRetryProbability),
//     else after the topic when the answer is not full; its messages are re-encoded as
//     5.3.3 does with popResponseReturnActualRetryTopic=false: the topic they were
//     popped for, the retry queue's id and offset, and the broker's POP_CK;
//   - each queue read gets a checkpoint (pop.go) and its entries in startOffsetInfo
//     and msgOffsetInfo; the answer is SUCCESS "FOUND" with invisibleTime,
//     startOffsetInfo, restNum, popTime, reviveQid (checkpoints spread over 8 revive
//     queues) and msgOffsetInfo, the body the records;
//   - a new group starts at the queue's min offset with init mode MIN, or for a retry
//     topic; with MAX at its last message (max offset - 1), unless the queue's first
//     message is still stored (initPopOffsetByCheckMsgInMem: then 0), and that offset
//     is committed;
//   - long polling: a pop that finds nothing is held until a message arrives on a queue
//     it reads (the topic's, not the retry topic's: golden p_pop_533 shows a revived
//     message does not wake a held pop), or until bornTime + pollTime, then answered
//     POLLING_TIMEOUT "NO_MESSAGE_IN_QUEUE" with the header's fields empty; a poll time
//     of 0 answers at once; beyond 100,000 held pops, POLLING_FULL.
//
// Left out: orderly POP (order=true is popped as unordered), attempt ids, the KV store
// path, pop inflight thresholds, broker-wide read permission, statistics.
func (b *Broker) popMessage(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.PopMessageRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	if h.BornTime == 0 {
		h.BornTime = nowMillis() // "fill born time to properties if not exist"
	}
	return b.pop1(sc, req, &h, true)
}

// heldPop is a pop waiting for a message.
type heldPop struct {
	sc   conn
	req  *remoting.Command
	h    protocol.PopMessageRequest
	task *task
}

// pop1 runs one pop and returns its answer, or nil when it is held (allowHold).
func (b *Broker) pop1(sc conn, req *remoting.Command, h *protocol.PopMessageRequest, allowHold bool) *remoting.Command {
	now := nowMillis()
	if now-h.BornTime-h.PollTime > 500 {
		return newResponse(req, protocol.ResponsePollingTimeout, "the broker["+b.storeHost.Addr().String()+"] pop message is timeout too much")
	}
	if h.MaxMsgNums > 32 {
		return newResponse(req, protocol.ResponseInvalidParameter, "the broker["+b.storeHost.Addr().String()+"] pop message's num is greater than 32")
	}
	b.mu.Lock()
	t := b.topics[h.Topic]
	if t == nil {
		b.mu.Unlock()
		return newResponse(req, protocol.ResponseTopicNotExist, "topic["+h.Topic+"] not exist, apply first please! "+faqSuffix)
	}
	if t.perm&permRead == 0 {
		b.mu.Unlock()
		return newResponse(req, protocol.ResponseNoPermission, "the topic["+h.Topic+"] peeking message is forbidden")
	}
	if h.QueueID >= t.read {
		b.mu.Unlock()
		return newResponse(req, protocol.ResponseInvalidParameter, illegalQueueRemark(sc, h.Topic, h.QueueID, t.read))
	}
	f, code, remark := b.popFilter(h)
	if f == nil {
		b.mu.Unlock()
		return newResponse(req, code, remark)
	}
	if b.pop.pending >= maxCheckpoints {
		b.mu.Unlock()
		return newResponse(req, protocol.ResponseSystemError, "fakebroker: too many pops waiting for acks on this broker")
	}

	b.pop.seq++
	reviveQID := int32(b.pop.seq % reviveQueueNum)
	randomQ := rand.IntN(100)
	p := popRun{b: b, h: h, f: f, popTime: now, reviveQID: reviveQID}
	retry := protocol.PopRetryTopic(h.Topic, h.ConsumerGroup)
	needRetry := randomQ < popFromRetryProbability
	if needRetry {
		p.readTopic(b.topics[retry], true, randomQ)
	}
	if h.QueueID < 0 {
		p.readTopic(t, false, randomQ)
	} else {
		p.readQueue(t, h.QueueID, false)
	}
	if !needRetry && p.n < int(h.MaxMsgNums) {
		p.readTopic(b.topics[retry], true, randomQ)
	}

	hdr := protocol.PopMessageResponse{InvisibleTime: h.InvisibleTime, StartOffsetInfo: string(p.startInfo),
		RestNum: p.rest, PopTime: now, ReviveQID: reviveQID, MsgOffsetInfo: string(p.msgInfo)}
	if p.n > 0 {
		b.mu.Unlock()
		resp := newResponse(req, protocol.ResponseSuccess, statusFound)
		resp.ExtFields = hdr.Encode()
		resp.Body = p.body
		return resp
	}
	code = protocol.ResponsePollingTimeout
	if allowHold && h.PollTime > 0 && now < h.BornTime+h.PollTime {
		if len(b.pop.held) < maxHeldPops {
			b.holdPop(sc, req, h, time.Duration(h.BornTime+h.PollTime-now)*time.Millisecond)
			b.mu.Unlock()
			return nil
		}
		code = protocol.ResponsePollingFull
	}
	b.mu.Unlock()
	resp := newResponse(req, code, statusNoMessage)
	resp.ExtFields = hdr.Encode()
	return resp
}

// popFilter builds the filter of a pop's subscription (FilterAPI.build on the request's
// expression), or returns the code and remark of its refusal. It runs under b.mu.
func (b *Broker) popFilter(h *protocol.PopMessageRequest) (*filter, int32, string) {
	if h.Exp == "" {
		return &filter{all: true}, 0, ""
	}
	if isTagType(h.ExpType) {
		sd, err := protocol.BuildSubscription(h.Topic, h.Exp)
		if err != nil {
			return nil, protocol.ResponseSubscriptionParseFailed, remarkSubParseFailed
		}
		return tagFilter(&sd), 0, ""
	}
	// 5.3.3's PopMessageProcessor, unlike its pull, does not look at enablePropertyFilter.
	fd := buildFilterData(h.Exp, h.ExpType, 0)
	if fd == nil {
		return nil, protocol.ResponseSubscriptionParseFailed, remarkSubParseFailed
	}
	return expressionFilter(fd), 0, ""
}

// popRun collects what one pop reads. It runs under b.mu.
type popRun struct {
	b                  *Broker
	h                  *protocol.PopMessageRequest
	f                  *filter
	popTime            int64
	reviveQID          int32
	n                  int   // messages found
	rest               int64 // messages left behind them
	body               []byte
	startInfo, msgInfo []byte
}

// readTopic pops every read queue of t, starting at randomQ (popMsgFromTopic).
func (p *popRun) readTopic(t *topicConfig, retry bool, randomQ int) {
	if t == nil || t.read <= 0 {
		return
	}
	for i := range int(t.read) {
		p.readQueue(t, int32((randomQ+i)%int(t.read)), retry)
	}
}

// readQueue pops one queue (popMsgFromQueue).
func (p *popRun) readQueue(t *topicConfig, queueID int32, retry bool) {
	b, h := p.b, p.h
	q := t.queue(queueID)
	if q == nil {
		return
	}
	key := popKey{group: h.ConsumerGroup, topic: t.name, queue: queueID}
	pq := b.popQueueOf(key)
	offset := b.popOffset(key, pq, q, h.InitMode, retry)
	if p.n >= int(h.MaxMsgNums) {
		p.rest += q.maxOffset() - offset
		return
	}
	var recs [maxTransferCount][]byte
	// start is the checkpoint's offset (5.3.3's finalOffset): where the group's offset
	// was, not where the pop read.
	start := offset
	r := b.getMessage(q, offset, h.MaxMsgNums-int32(p.n), p.f, &recs)
	if r.status == statusOffsetTooSmall || r.status == statusOverflowBadly {
		// The stored offset is not right (the queue was truncated): read again from the
		// store's answer, committing it, as 5.3.3 does. 5.3.3 still names the old offset
		// as the start in startOffsetInfo, the handles and the checkpoint, so the
		// messages' offsets may lie far above it (or below, past an overflow).
		offset = r.next
		b.commitOffset(key.group, key.topic, key.queue, offset)
		r = b.getMessage(q, offset, h.MaxMsgNums-int32(p.n), p.f, &recs)
	}
	switch {
	case r.n > 0:
		offs := make([]int64, 0, r.n)
		mark := protocol.TopicMark(t.name)
		for _, rec := range recs[:r.n] {
			raw, ok := parseRecord(rec)
			if !ok {
				continue
			}
			offs = append(offs, raw.queueOffset)
			if retry {
				rec = b.reencodePopRetry(rec, raw, p, start)
			}
			p.body = append(p.body, rec...)
		}
		p.n += len(offs)
		b.addCheckpoint(&checkpoint{key: key, start: start, offsets: offs, popTime: p.popTime,
			invisible: h.InvisibleTime, reviveQID: p.reviveQID, holds: true})
		p.startInfo = protocol.AppendStartOffsetInfo(p.startInfo, mark, queueID, start)
		p.msgInfo = protocol.AppendMsgOffsetInfo(p.msgInfo, mark, queueID, offs)
		pq.next = r.next
	case r.status == statusNoMatched:
		pq.next = r.next // skipped, as addCkMock lets the offset move past them
		if len(pq.cks) == 0 {
			b.commitPopOffset(key, r.next)
		}
	}
	p.rest += r.max - r.next
}

// popOffset is getPopOffset: where a pop of key's queue reads, the group's committed
// offset or the init mode's start for a new group (then committed), and never before
// where the previous pop stopped. It runs under b.mu.
func (b *Broker) popOffset(key popKey, pq *popQueue, q *consumeQueue, initMode int32, retry bool) int64 {
	off, ok := b.offsets[offsetKey{group: key.group, topic: key.topic, queue: key.queue}]
	if !ok || off < 0 {
		switch {
		case initMode == protocol.InitModeMin || retry:
			off = q.minOffset()
		case q.minOffset() <= 0 && len(q.entries) > 0 && q.base == 0:
			off = 0 // initPopOffsetByCheckMsgInMem: the queue's first message is still stored
		default:
			off = max(q.maxOffset()-1, 0) // "pop last one"
		}
		b.commitOffset(key.group, key.topic, key.queue, off)
	}
	return max(off, pq.next)
}

// reencodePopRetry rewrites a record popped from a POP retry topic as 5.3.3 does: the
// topic it was popped for, and the POP_CK of this pop (unless it has one). It runs
// under b.mu.
func (b *Broker) reencodePopRetry(rec []byte, raw rawRecord, p *popRun, start int64) []byte {
	props := parseJProps5(raw.props)
	if _, ok := props.get(protocol.PropertyPopCK); !ok {
		props.put(protocol.PropertyPopCK, protocol.ExtraInfo{CkQueueOffset: start, PopTime: p.popTime,
			InvisibleTime: p.h.InvisibleTime, ReviveQID: p.reviveQID, TopicMark: protocol.TopicMark(raw.topic),
			BrokerName: b.name, QueueID: raw.queueID, QueueOffset: raw.queueOffset}.String())
	}
	m := &message.Ext{
		Message:         message.Message{Topic: p.h.Topic, Flag: raw.flag, Body: raw.body, Properties: message.PropertiesFromWire(props.String())},
		QueueID:         raw.queueID,
		QueueOffset:     raw.queueOffset,
		SysFlag:         raw.sysFlag,
		BornTimestamp:   raw.bornTs,
		BornHost:        raw.bornHost,
		StoreTimestamp:  raw.storeTs,
		StoreHost:       raw.storeHost,
		CommitLogOffset: raw.offset,
		ReconsumeTimes:  raw.reconsumeTimes,
	}
	out, err := message.AppendStoreRecord(nil, m)
	if err != nil {
		return rec // cannot happen for a record the store wrote; keep it as it is
	}
	return out
}

// holdPop keeps a pop until a message arrives or its poll time ends. It runs under b.mu.
func (b *Broker) holdPop(sc conn, req *remoting.Command, h *protocol.PopMessageRequest, wait time.Duration) {
	if connGone(sc) {
		return // closed meanwhile (connClosed has run): nobody to answer
	}
	hp := &heldPop{sc: sc, req: req, h: *h}
	b.pop.held[hp] = struct{}{}
	gen := b.runGen
	hp.task = b.c.sched.after(wait, func() { b.wakePops(gen, []*heldPop{hp}) })
}

// popsArrived wakes the pops held on topic queue q after a message arrived (a pop of
// any queue, or of q's). It runs under b.mu; the pops run again on the scheduler.
func (b *Broker) popsArrived(q *consumeQueue) {
	if len(b.pop.held) == 0 {
		return
	}
	var wake []*heldPop
	for hp := range b.pop.held {
		if hp.h.Topic == q.topic && (hp.h.QueueID < 0 || hp.h.QueueID == q.id) {
			wake = append(wake, hp)
		}
	}
	if len(wake) > 0 {
		gen := b.runGen
		b.c.sched.after(0, func() { b.wakePops(gen, wake) })
	}
}

// wakePops runs held pops again: each is answered, or held again until its poll time
// ends.
func (b *Broker) wakePops(gen uint64, pops []*heldPop) {
	b.mu.Lock()
	if gen != b.runGen {
		b.mu.Unlock()
		return
	}
	live := pops[:0]
	for _, hp := range pops {
		if _, ok := b.pop.held[hp]; ok {
			delete(b.pop.held, hp)
			b.c.sched.cancel(hp.task)
			live = append(live, hp)
		}
	}
	b.mu.Unlock()
	for _, hp := range live {
		if connGone(hp.sc) {
			continue // as 5.3.3's wakeUp: a closed channel's pop is not run
		}
		if resp := b.pop1(hp.sc, hp.req, &hp.h, true); resp != nil {
			resp.Serialize = remoting.SerializeJSON
			b.ep.respond(hp.sc, resp)
		}
	}
}

// dropPops forgets the held pops of a connection, or every held pop (sc nil), without
// answering them. It runs under b.mu.
func (b *Broker) dropPops(sc conn) {
	for hp := range b.pop.held {
		if sc == nil || hp.sc == sc {
			b.c.sched.cancel(hp.task)
			delete(b.pop.held, hp)
		}
	}
}

// connGone reports whether sc is closed (Netty's !channel.isActive()), for connections
// that tell.
func connGone(sc conn) bool {
	d, ok := sc.(interface{ Done() <-chan struct{} })
	if !ok {
		return false
	}
	select {
	case <-d.Done():
		return true
	default:
		return false
	}
}
