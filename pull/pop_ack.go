package pull

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/processqueue"
)

// What becomes of a popped message once its listener call ended (Java's
// ConsumeMessagePopConcurrentlyService.processConsumeResult and DefaultMQPushConsumerImpl
// ackAsync / changePopInvisibleTimeAsync): an ack, or a new invisible time (the retry
// delay), or the dead-letter queue and an ack. Acks to one broker wait up to AckLinger
// to go together in one BATCH_ACK_MESSAGE; a broker that does not know that request
// (REQUEST_CODE_NOT_SUPPORTED) gets one ACK_MESSAGE per message from then on, as Java's
// push consumer always sends them.

// maxAckBatch is how many acks one BATCH_ACK_MESSAGE carries at most; an ack that fills
// a broker's batch sends it at once. Eight pops' worth: a consumer popping 100k
// messages a second fills it in 2.5 ms, within AckLinger, with a quarter of the
// requests 64 took (4.7 instead of 16.1 per 1,000 messages; 0.3–0.6 CPU-s per million
// less in the client and 0.4–0.7 less in the broker, realistic mode and a real 5.3.3).
const maxAckBatch = 256

// maxAckTries is how often an ack whose request failed is sent: after that its message
// comes back from the broker, to be consumed again.
const maxAckTries = 3

// ackRetryDelay is how long a failed ack waits before it is sent again.
const ackRetryDelay = 100 * time.Millisecond

// maxBatchAckGap bounds offset − ckQueueOffset of an ack that goes in a
// BATCH_ACK_MESSAGE: its BatchAck's bit set (Java's BitSet, keyed by that gap) takes
// gap/8 bytes (JSON: about 1.3 KB), so a batch of maxAckBatch acks, each of its own pop,
// stays under half a megabyte. A pop returns at most 32 messages per queue, and a tag
// filter lets the broker skip at most a few hundred consume-queue entries per read, so
// a real pop's gap is well below it. Above it is a
// handle that only names an old start offset: 5.3.3, after OFFSET_TOO_SMALL, reads from
// the queue's min offset but writes the group's stale committed offset as the start, so
// the gap is whatever retention removed (10^8 made a 16.7 MB body, over the broker's
// 16 MiB frame limit: the connection closed and every ack of the batch failed). Such an
// ack, and one whose offset is below its start offset (no bit to set), goes as one
// ACK_MESSAGE, as Java's push consumer sends every ack.
const maxBatchAckGap = 4096

// batchable reports whether an ack may go in a BATCH_ACK_MESSAGE (see maxBatchAckGap).
func (it *ackItem) batchable() bool {
	// Both offsets not negative: the difference cannot overflow.
	return it.h.CkQueueOffset >= 0 && it.h.QueueOffset >= it.h.CkQueueOffset && it.h.QueueOffset-it.h.CkQueueOffset <= maxBatchAckGap
}

// Apply applies the result of message i of b, popped by r: the message leaves its batch
// and what action needs is sent (ack, retry delay, dead-letter queue), unless a change
// of its invisible time is in flight: its end applies the result with the new handle. It
// runs on a consume worker and may wait for the dead-letter send.
func (s *PopService) Apply(r *PopRequest, b *processqueue.PopBatch, i int, action processqueue.PopAction, delay time.Duration) {
	if e, ok := b.Finish(i, action, delay); ok {
		s.apply(r, b, i, e, action, delay, true)
	}
}

// apply sends what action needs for message i, whose state is e, and then releases the
// message's lent body (only a dead-letter send reads it). A dead-letter send goes
// through cfg.Async unless canWait.
func (s *PopService) apply(r *PopRequest, b *processqueue.PopBatch, i int, e processqueue.PopEntry, action processqueue.PopAction, delay time.Duration, canWait bool) {
	if action != processqueue.PopActionDLQ {
		defer b.ReleaseBody()
	}
	switch action {
	case processqueue.PopActionAck:
		s.acks.ack(r.Queue.Topic, e.Handle, !e.Deadline.After(time.Now()))
	case processqueue.PopActionRetry:
		s.counters.Retried.Add(1)
		s.changeInvisible(r, e.Handle, delay, func(_ protocol.ExtraInfo, err error) {
			if err != nil {
				s.counters.RetryFailed.Add(1)
				s.handFailed("changing a failed message's invisible time failed; it comes back after its pop's", r.Queue.Topic, err)
			}
		})
	case processqueue.PopActionDLQ:
		m := b.Msgs()[i]
		send := func() {
			defer b.ReleaseBody()
			if s.cfg.DeadLetter(m) {
				s.counters.DeadLettered.Add(1)
				s.acks.ack(r.Queue.Topic, e.Handle, false)
				return
			}
			// Not sent: the message comes back after delay, and its next failure tries
			// the dead-letter queue again.
			s.changeInvisible(r, e.Handle, delay, func(protocol.ExtraInfo, error) {})
		}
		if canWait {
			send()
		} else {
			s.hands.add()
			s.cfg.Async(func() {
				defer s.hands.done()
				send()
			})
		}
	case processqueue.PopActionAbandon:
		s.counters.Abandoned.Add(1)
	}
}

// changeInvisible sends a CHANGE_MESSAGE_INVISIBLETIME for handle; callback gets the new
// handle or the error.
func (s *PopService) changeInvisible(r *PopRequest, handle string, d time.Duration, callback func(protocol.ExtraInfo, error)) {
	h, err := protocol.ParseExtraInfo(handle)
	if err != nil {
		callback(protocol.ExtraInfo{}, err)
		return
	}
	addr, ok := s.brokerAddr(h.BrokerName)
	if !ok {
		callback(protocol.ExtraInfo{}, errBrokerUnknown)
		return
	}
	req := protocol.ChangeInvisibleTimeRequest{InvisibleTime: d.Milliseconds(), QueueID: h.QueueID, Offset: h.QueueOffset,
		BrokerName: h.BrokerName, Topic: h.RealTopic(r.Queue.Topic, s.cfg.Group), ConsumerGroup: s.cfg.Group, ExtraInfo: handle}
	s.hands.add()
	s.counters.ChangeReqs.Add(1)
	err = s.cfg.Broker.ChangeInvisibleTimeAsync(addr, &req, s.cfg.RequestTimeout, func(nh protocol.ExtraInfo, err error) {
		defer s.hands.done()
		callback(nh, err)
	})
	if err != nil {
		s.hands.done()
		callback(protocol.ExtraInfo{}, err)
	}
}

var errBrokerUnknown = errors.New("pull: pop: the broker of the handle is not in any known route")

// brokerAddr returns the master address of a broker named in a handle.
func (s *PopService) brokerAddr(name string) (string, bool) {
	addr, _, ok := s.cfg.Broker.FindBrokerAddr(name, client.MasterID, true)
	if !ok {
		s.cfg.Broker.RequestRouteRefresh()
	}
	return addr, ok
}

// handFailed logs a failed ack or invisible-time change, at most once a second.
func (s *PopService) handFailed(msg, topic string, err error) {
	ok, suppressed := s.handLog.allow()
	if ok && logging.Enabled(s.log, logging.LevelWarn) {
		s.log.Log(logging.LevelWarn, msg, "group", s.cfg.Group, "topic", topic, "err", err, "suppressedSinceLast", suppressed)
	}
}

// Flush sends the acks waiting for a batch and waits, within ctx, for every ack and
// invisible-time change in flight. Acks sent after it go out at once, one by one.
func (s *PopService) Flush(ctx context.Context) error {
	s.acks.close()
	return s.hands.wait(ctx)
}

// ackItem is one ack waiting to be sent.
type ackItem struct {
	topic  string // the topic popped for, on the wire
	handle string
	h      protocol.ExtraInfo
	tries  int
	due    time.Time // a failed ack: when it is sent again
}

// acker batches acks by broker.
type acker struct {
	s *PopService

	mu        sync.Mutex
	byAddr    map[string][]ackItem
	free      [][]ackItem // batches answered, emptied, to be filled again (capacity maxAckBatch)
	retries   []ackItem   // failed acks waiting for their due time
	timer     *time.Timer
	armedAt   time.Time       // when the timer fires; zero while it is not armed
	lingering bool            // the timer is armed for the acks waiting for a batch
	noBatch   map[string]bool // brokers that refused BATCH_ACK_MESSAGE
	closed    bool            // Flush ran: no more batching
}

// maxFreeAckBatches bounds the emptied batches an acker keeps: one or two per broker
// are filled at a time.
const maxFreeAckBatches = 8

func newAcker(s *PopService) *acker {
	a := &acker{s: s, byAddr: make(map[string][]ackItem), noBatch: make(map[string]bool)}
	a.timer = time.AfterFunc(time.Hour, func() { a.flush(false) })
	a.timer.Stop()
	return a
}

// ack acks the message with handle, popped for topic; late says its invisible time was
// over already.
func (a *acker) ack(topic, handle string, late bool) {
	s := a.s
	if late {
		s.counters.LateAcks.Add(1)
	}
	h, err := protocol.ParseExtraInfo(handle)
	if err != nil {
		s.counters.AckFailed.Add(1)
		s.handFailed("cannot ack: bad handle; the message comes back", topic, err)
		return
	}
	a.add(ackItem{topic: topic, handle: handle, h: h})
}

// add sends it at once, or queues it for the next batch to its broker.
func (a *acker) add(it ackItem) {
	s := a.s
	addr, ok := s.brokerAddr(it.h.BrokerName)
	if !ok {
		a.failed([]ackItem{it}, errBrokerUnknown)
		return
	}
	a.mu.Lock()
	if s.cfg.AckLinger <= 0 || a.closed || a.noBatch[addr] {
		a.mu.Unlock()
		a.sendSingle(addr, it)
		return
	}
	items := a.byAddr[addr]
	if items == nil {
		items = a.newBatchLocked()
	}
	items = append(items, it)
	if len(items) >= maxAckBatch {
		delete(a.byAddr, addr)
		a.mu.Unlock()
		a.send(addr, items)
		return
	}
	a.byAddr[addr] = items
	if !a.lingering { // else the timer fires no later than this ack's linger
		a.lingering = true
		a.armLocked(time.Now().Add(s.cfg.AckLinger))
	}
	a.mu.Unlock()
}

// newBatchLocked returns an empty batch: an answered one again, or a new one. a.mu is
// held.
func (a *acker) newBatchLocked() []ackItem {
	if k := len(a.free); k > 0 {
		items := a.free[k-1]
		a.free[k-1] = nil
		a.free = a.free[:k-1]
		return items
	}
	return make([]ackItem, 0, maxAckBatch)
}

// recycle takes back a batch whose request was answered, and whose items are no longer
// read: the acks that failed were copied to be sent again.
func (a *acker) recycle(items []ackItem) {
	if cap(items) != maxAckBatch {
		return
	}
	clear(items[:cap(items)]) // no handles kept alive
	a.mu.Lock()
	if len(a.free) < maxFreeAckBatches {
		a.free = append(a.free, items[:0])
	}
	a.mu.Unlock()
}

// retryLater queues a failed ack to be sent again after ackRetryDelay: the timer sends
// it, looking its broker up again (a failure here never sends it again at once, which
// would spend its tries within microseconds, before a route refresh could help).
func (a *acker) retryLater(it ackItem) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		it.tries = maxAckTries
		a.failed([]ackItem{it}, errors.New("pull: pop: shut down before the ack could be sent again"))
		return
	}
	it.due = time.Now().Add(ackRetryDelay)
	a.retries = append(a.retries, it)
	a.armLocked(it.due)
	a.mu.Unlock()
}

// armLocked makes the timer fire at at or earlier. a.mu is held.
func (a *acker) armLocked(at time.Time) {
	if a.armedAt.IsZero() || at.Before(a.armedAt) {
		a.armedAt = at
		a.timer.Reset(time.Until(at))
	}
}

// flush sends every ack waiting for a batch and the failed ones due again (all of them
// when all is set), and arms the timer for those not due yet.
func (a *acker) flush(all bool) {
	now := time.Now()
	a.mu.Lock()
	a.armedAt = time.Time{}
	a.lingering = false
	batches := a.byAddr
	a.byAddr = make(map[string][]ackItem)
	var due []ackItem
	kept := a.retries[:0]
	for _, it := range a.retries {
		if all || !it.due.After(now) {
			due = append(due, it)
		} else {
			kept = append(kept, it)
		}
	}
	clear(a.retries[len(kept):])
	a.retries = kept
	if len(kept) > 0 {
		next := kept[0].due
		for _, it := range kept[1:] {
			if it.due.Before(next) {
				next = it.due
			}
		}
		a.armLocked(next)
	}
	a.mu.Unlock()
	for _, it := range due {
		addr, ok := a.s.brokerAddr(it.h.BrokerName)
		if !ok {
			a.failed([]ackItem{it}, errBrokerUnknown)
			continue
		}
		batches[addr] = append(batches[addr], it)
	}
	for addr, items := range batches {
		for len(items) > maxAckBatch {
			a.send(addr, items[:maxAckBatch:maxAckBatch])
			items = items[maxAckBatch:]
		}
		a.send(addr, items)
	}
}

// close sends what waits and turns batching off.
func (a *acker) close() {
	a.mu.Lock()
	a.closed = true
	a.timer.Stop()
	a.mu.Unlock()
	a.flush(true)
}

// send sends items to addr: one BATCH_ACK_MESSAGE, or single acks to a broker without
// it, and for the acks a batch cannot carry (see maxBatchAckGap).
func (a *acker) send(addr string, items []ackItem) {
	a.mu.Lock()
	single := a.noBatch[addr]
	a.mu.Unlock()
	if !single {
		batched := items[:0] // in place: an item is moved only to where one was read
		for _, it := range items {
			if it.batchable() {
				batched = append(batched, it)
			} else {
				a.sendSingle(addr, it)
			}
		}
		items = batched
	}
	if single || len(items) <= 1 {
		for _, it := range items {
			a.sendSingle(addr, it)
		}
		a.recycle(items)
		return
	}
	s := a.s
	body := protocol.BatchAckRequest{BrokerName: items[0].h.BrokerName, Acks: make([]protocol.BatchAck, 0, 4)}
	j := -1 // the entry of the previous item: most follow one of the same pop
	for _, it := range items {
		if j < 0 || !sameCheckpoint(&body.Acks[j], it) {
			j = -1
			for k := range body.Acks {
				if sameCheckpoint(&body.Acks[k], it) {
					j = k
					break
				}
			}
		}
		if j < 0 {
			j = len(body.Acks)
			body.Acks = append(body.Acks, protocol.BatchAck{ConsumerGroup: s.cfg.Group, Topic: it.topic, Retry: it.h.TopicMark,
				StartOffset: it.h.CkQueueOffset, QueueID: it.h.QueueID, ReviveQueueID: it.h.ReviveQID, PopTime: it.h.PopTime,
				InvisibleTime: it.h.InvisibleTime})
		}
		body.Acks[j].Set(int(it.h.QueueOffset - it.h.CkQueueOffset)) // batchable: 0 to maxBatchAckGap, so it is set
	}
	s.hands.add()
	s.counters.BatchAcks.Add(1)
	err := s.cfg.Broker.BatchAckAsync(addr, &body, s.cfg.RequestTimeout, func(err error) {
		defer s.hands.done()
		a.batchAnswered(addr, items, err)
		a.recycle(items)
	})
	if err != nil {
		// Not recycled: should a PopBroker call back as well, the batch must not be
		// filled twice.
		s.hands.done()
		a.batchAnswered(addr, items, err)
	}
}

// sameCheckpoint reports whether it is acked in entry b: the same pop of the same
// queue (topic, retry mark, queue, start offset and pop time).
func sameCheckpoint(b *protocol.BatchAck, it ackItem) bool {
	return b.StartOffset == it.h.CkQueueOffset && b.PopTime == it.h.PopTime && b.QueueID == it.h.QueueID &&
		b.Retry == it.h.TopicMark && b.Topic == it.topic
}

func (a *acker) batchAnswered(addr string, items []ackItem, err error) {
	switch {
	case err == nil:
		a.s.counters.Acked.Add(int64(len(items)))
	case errors.Is(err, protocol.ResponseCodeError(protocol.ResponseRequestCodeNotSupported)):
		a.mu.Lock()
		a.noBatch[addr] = true
		a.mu.Unlock()
		if logging.Enabled(a.s.log, logging.LevelInfo) {
			a.s.log.Log(logging.LevelInfo, "broker does not take batched acks; acking message by message", "addr", addr)
		}
		for _, it := range items {
			a.sendSingle(addr, it)
		}
	default:
		a.failed(items, err)
	}
}

// sendSingle sends one ACK_MESSAGE.
func (a *acker) sendSingle(addr string, it ackItem) {
	s := a.s
	h := protocol.AckMessageRequest{QueueID: it.h.QueueID, Offset: it.h.QueueOffset, BrokerName: it.h.BrokerName,
		Topic: it.h.RealTopic(it.topic, s.cfg.Group), ConsumerGroup: s.cfg.Group, ExtraInfo: it.handle}
	s.hands.add()
	s.counters.SingleAcks.Add(1)
	err := s.cfg.Broker.AckAsync(addr, &h, s.cfg.RequestTimeout, func(err error) {
		defer s.hands.done()
		if err != nil {
			a.failed([]ackItem{it}, err)
			return
		}
		s.counters.Acked.Add(1)
	})
	if err != nil {
		s.hands.done()
		a.failed([]ackItem{it}, err)
	}
}

// failed sends the acks of a failed request again a little later, up to maxAckTries;
// past that their messages come back from the broker.
func (a *acker) failed(items []ackItem, err error) {
	s := a.s
	var be *protocol.BrokerError
	permanent := errors.As(err, &be) // the broker refused it: sending it again changes nothing
	for _, it := range items {
		if it.tries++; it.tries >= maxAckTries || permanent || errors.Is(err, client.ErrClosed) {
			s.counters.AckFailed.Add(1)
			s.handFailed("ack failed; the message will be delivered again", it.topic, err)
			continue
		}
		a.retryLater(it)
	}
}

// pendingCalls counts calls in flight and lets a caller wait, within a context, until
// none is left.
type pendingCalls struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n drops to 0; nil while nobody waits
}

func (p *pendingCalls) add() {
	p.mu.Lock()
	p.n++
	p.mu.Unlock()
}

func (p *pendingCalls) done() {
	p.mu.Lock()
	if p.n--; p.n == 0 && p.zero != nil {
		close(p.zero)
		p.zero = nil
	}
	p.mu.Unlock()
}

func (p *pendingCalls) wait(ctx context.Context) error {
	p.mu.Lock()
	if p.n == 0 {
		p.mu.Unlock()
		return nil
	}
	if p.zero == nil {
		p.zero = make(chan struct{})
	}
	zero := p.zero
	p.mu.Unlock()
	select {
	case <-zero:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
