package consumer

import (
	"context"
	"maps"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
	"github.com/rmqpush/rmqpush/pull"
)

// POP consumption (RocketMQ 5, WithClientRebalance(false) and a group the operator set
// to POP): the brokers hand out messages with an invisible time and take an ack per
// message, so a group may have more members than queues and no queue waits for a
// member. Popped messages go through the same worker pool, listener and hooks as pulled
// ones; what differs is what a result does (Java's ConsumeMessagePopConcurrentlyService):
//
//   - success: the messages up to AckIndex are acked;
//   - ReconsumeLater, a panic, or the messages after AckIndex: each becomes invisible for
//     the delay of its reconsume times in Java's popDelayLevel (10 s, 30 s, 1 min, ...;
//     DelayLevelWhenNextConsume > 0 picks the level), after which the broker delivers it
//     again from the group's POP retry topic with one more reconsume time;
//   - past MaxReconsumeTimes (or DelayLevelWhenNextConsume -1): the dead-letter queue
//     (CONSUMER_SEND_MSG_BACK with delay level -1, as RocketMQ 5's proxy does for its
//     clients), then an ack. Java's remoting push consumer never dead-letters in POP
//     mode: it keeps delaying such a message by its age, and acks it, lost, after 4 h.
//
// A message whose invisible time ended before its listener call began is not consumed
// here (the broker gives it to another pop); one whose call outlives it was extended
// meanwhile (pop_extend.go in package pull).

// defaultPopDelayLevels returns Java's popDelayLevel.
func defaultPopDelayLevels() []time.Duration {
	return []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 3 * time.Minute,
		4 * time.Minute, 5 * time.Minute, 6 * time.Minute, 7 * time.Minute, 8 * time.Minute, 9 * time.Minute,
		10 * time.Minute, 20 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour}
}

// popAckLinger is how long an ack waits for others to the same broker, to go in one
// BATCH_ACK_MESSAGE.
const popAckLinger = 5 * time.Millisecond

// DispatchPop queues a pop's messages in listener calls; see pull.PopDispatcher. After
// stop they are abandoned, as the queued ones stop drops.
func (s *concurrentService) DispatchPop(r *pull.PopRequest, b *processqueue.PopBatch) {
	if !s.queue.pushPop(r, b, s.c.cfg.consumeBatchMaxSize) {
		s.abandon(r, b, 0, len(b.Msgs()))
	}
}

// abandon abandons messages [lo, hi) of b: nothing acks or extends them, and the broker
// gives them to another pop once their invisible time is over.
func (s *concurrentService) abandon(r *pull.PopRequest, b *processqueue.PopBatch, lo, hi int) {
	for i := lo; i < hi; i++ {
		s.c.popService.Apply(r, b, i, processqueue.PopActionAbandon, 0)
	}
}

// consumePop makes one listener call on popped messages and applies its result.
func (s *concurrentService) consumePop(t task, cc *ConcurrentlyContext, call *ConsumeCall, clock *workerClock, valid *[]bool) {
	pt := t.pop
	begin := clock.now()
	*valid = pt.batch.BeginConsume(pt.first, pt.first+len(t.msgs), begin, (*valid)[:0])
	msgs := t.msgs
	if !allTrue(*valid) {
		// Their invisible time ended before their turn came (Java's isPopTimeout):
		// another pop has them. The others are consumed.
		msgs = make([]*message.Ext, 0, len(t.msgs))
		for k, ok := range *valid {
			if ok {
				msgs = append(msgs, t.msgs[k])
			} else {
				s.c.popService.Apply(pt.r, pt.batch, pt.first+k, processqueue.PopActionAbandon, 0)
			}
		}
		if len(msgs) == 0 {
			return
		}
	}
	q := pt.r.Queue
	uq := s.c.names.UserQueue(q)
	*cc = ConcurrentlyContext{Queue: uq, AckIndex: defaultAckIndex}
	ctx := s.c.listenerCtx
	if call != nil {
		*call = ConsumeCall{Group: s.c.names.UserGroup, ClientID: s.c.clientID, Model: s.c.cfg.model, Queue: uq, Msgs: msgs, Begin: begin}
		ctx = s.c.hooks.beginCall(ctx, call)
	}
	status, panicked := s.call(ctx, msgs, cc)
	end := clock.now()
	took := end.Sub(begin)
	ack := ackIndex(status, cc.AckIndex, len(msgs))
	if call != nil {
		call.Took, call.Status, call.Success = took, status.String(), status == ConsumeSuccess
		call.AckIndex = ack
		call.ReturnType = returnType(panicked, call.Success, took >= s.c.cfg.consumeTimeout)
		s.c.hooks.endCall(ctx, call)
	}
	s.c.stats.consumed(q.Topic, took, status == ConsumeSuccess, len(msgs), ack)
	k := 0 // index in msgs
	for j := range t.msgs {
		if !(*valid)[j] {
			continue
		}
		i := pt.first + j
		if k <= ack {
			s.c.popService.Apply(pt.r, pt.batch, i, processqueue.PopActionAck, 0)
		} else {
			action, delay := s.c.popRetry(msgs[k], int32(cc.DelayLevelWhenNextConsume))
			s.c.popService.Apply(pt.r, pt.batch, i, action, delay)
		}
		k++
	}
}

func allTrue(v []bool) bool {
	for _, b := range v {
		if !b {
			return false
		}
	}
	return true
}

// popRetry returns what becomes of a popped message whose listener call failed: the
// dead-letter queue past MaxReconsumeTimes or for delay level -1, else a retry after
// the delay of its level (Java's changePopInvisibleTime: level 0 means the message's
// reconsume times; beyond the table, its last delay).
func (c *PushConsumer) popRetry(m *message.Ext, delayLevel int32) (processqueue.PopAction, time.Duration) {
	levels := c.cfg.popDelayLevels
	if delayLevel < 0 || m.ReconsumeTimes >= c.maxReconsumeTimes() {
		return processqueue.PopActionDLQ, levels[len(levels)-1]
	}
	if delayLevel == 0 {
		delayLevel = m.ReconsumeTimes
	}
	if int(delayLevel) >= len(levels) {
		return processqueue.PopActionRetry, levels[len(levels)-1]
	}
	return processqueue.PopActionRetry, levels[delayLevel]
}

// deadLetter sends a popped message to the dead-letter queue; the pop service acks it
// then. It reports whether it did.
func (c *PushConsumer) deadLetter(m *message.Ext) bool {
	var begin time.Time
	if len(c.hooks.sendBack) > 0 {
		begin = time.Now()
	}
	maxTimes := c.maxReconsumeTimes()
	err := c.inst.SendMessageBack(c.listenerCtx, c.group, m, -1, maxTimes)
	if err != nil {
		c.logMsg(logging.LevelWarn, "sending a popped message to the dead-letter queue failed; it comes back after its retry delay", m.Queue(), m, err)
	}
	c.sentBack(SendBackEvent{Msg: m, DelayLevel: -1, Err: err}, begin, maxTimes)
	return err == nil
}

// buildPopService creates the pop service of a consumer whose brokers assign queues.
func (c *PushConsumer) buildPopService(service *concurrentService) error {
	var err error
	c.popService, err = pull.NewPopService(pull.PopConfig{
		Group:          c.group,
		Namespace:      string(c.names.NS),
		Broker:         c.inst,
		Dispatcher:     service,
		Subs:           subscriptions{c},
		Decoder:        &message.Decoder{},
		Logger:         c.log,
		Limits:         c.popLimits,
		BatchSize:      int32(c.cfg.popBatchSize),
		InvisibleTime:  c.cfg.popInvisibleTime,
		PollTime:       c.cfg.pullSuspend,
		RequestTimeout: c.cfg.apiTimeout,
		Interval:       c.cfg.pullInterval,
		AckLinger:      popAckLinger,
		MaxHold:        c.cfg.consumeTimeout,
		Paused:         c.paused.Load,
		Filter:         c.filter(),
		OnPulled:       c.pulled,
		DeadLetter:     c.deadLetter,
		Async:          func(fn func()) { c.brokerJobs.after(0, fn) },
		LendBodies:     c.cfg.lentBodies,
	})
	return err
}

// popLimits are a POP queue's flow-control limits: WithPopThresholdForQueue messages
// waiting for their acks, and WithPullThresholdSizeForQueue MiB of them.
func (c *PushConsumer) popLimits(message.Queue) pull.Limits {
	return pull.Limits{Count: int64(c.cfg.popThresholdForQueue), SizeMiB: int64(c.cfg.pullThresholdSizeMiB)}
}

// popInitMode is where a new group starts popping (Java's getConsumeInitMode).
func (c *PushConsumer) popInitMode() int32 {
	if c.cfg.consumeFrom == ConsumeFromFirstOffset {
		return protocol.InitModeMin
	}
	return protocol.InitModeMax
}

// flushPops sends the acks waiting and waits for those in flight, within ctx and the
// request timeout (Shutdown).
func (c *PushConsumer) flushPops(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.apiTimeout)
	defer cancel()
	return c.popService.Flush(ctx)
}

// consumePopRetryTopic subscribes to (on) or unsubscribes from the group's POP retry
// topic of topic (a wire name), as Java's updateMessageQueueAssignment does when the
// brokers assign topic wholly in PULL or wholly in POP mode: back in PULL mode, what
// was revived there while the group popped is pulled (and its messages get their
// topic back: client.Names.ResetMessage); in POP mode the brokers pop it themselves.
func (c *PushConsumer) consumePopRetryTopic(topic string, on bool) {
	retry := protocol.PopRetryTopic(topic, c.group)
	for {
		old := c.subs.Load()
		_, has := (*old)[retry]
		if has == on {
			return
		}
		next := maps.Clone(*old)
		if on {
			sd, err := protocol.BuildSubscription(retry, protocol.SubAll)
			if err != nil {
				return
			}
			sd.SubVersion = time.Now().UnixMilli()
			next[retry] = sd
		} else {
			delete(next, retry)
		}
		if c.subs.CompareAndSwap(old, &next) {
			break
		}
	}
	c.inst.HeartbeatSoon()
	if on {
		c.rebalancer.Trigger() // the new topic's queues
	}
}

// popStats adds the POP queues and counters to a Stats.
func (c *PushConsumer) popStats(out *Stats) {
	for _, r := range c.rebalancer.PopRequests() {
		qs := QueueStats{CachedMsgs: r.PQ.Count(), CachedBytes: r.PQ.Size(), CommittedOffset: -1, BrokerMaxOffset: -1}
		if ts, ok := r.PQ.OldestStoreTimestamp(); ok {
			qs.OldestCachedStoreTime = time.UnixMilli(ts)
		}
		out.Queues[c.names.UserQueue(r.Queue)] = qs
	}
	n := c.popService.Counters()
	out.Pop = PopStats{
		Popped: n.Popped.Load(), Acked: n.Acked.Load(), LateAcks: n.LateAcks.Load(), AckFailed: n.AckFailed.Load(),
		Retried: n.Retried.Load(), RetryFailed: n.RetryFailed.Load(), Extended: n.Extended.Load(),
		ExtendFailed: n.ExtendFailed.Load(), DeadLettered: n.DeadLettered.Load(), Abandoned: n.Abandoned.Load(),
		Filtered: n.Filtered.Load(),
		Requests: PopRequests{Pops: n.PopsSent.Load(), NotFound: n.PopsNotFound.Load(), PollingFull: n.PollingFull.Load(),
			Failed: n.PopErrors.Load(), BatchAcks: n.BatchAcks.Load(), Acks: n.SingleAcks.Load(), Changes: n.ChangeReqs.Load()},
	}
}
