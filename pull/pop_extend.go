package pull

import (
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/processqueue"
)

// Extending invisible times: a message whose invisible time is about to end while it
// still waits for, or is in, its listener call gets the pop's invisible time again from
// now (CHANGE_MESSAGE_INVISIBLETIME), so a slow listener does not see its message
// delivered to another member meanwhile. Java's push consumer does not do this: it lets
// the broker deliver the message again and skips the result of a call that outlived
// the invisible time. A message is extended until MaxHold after its pop (the consume
// timeout); then the broker gives it to another pop. Its result, if it comes later, is
// still sent: a real broker revives a message a second or two after its invisible time,
// so a late ack often still prevents the second delivery.

// ExtendEvery is how often Extend should run for an invisible time d: often enough that
// a message is seen at least twice within its last margin.
func ExtendEvery(d time.Duration) time.Duration {
	return min(time.Second, max(extendMargin(d)/4, time.Millisecond))
}

// extendMargin is how long before its invisible time ends a message is extended.
func extendMargin(d time.Duration) time.Duration { return min(d/2, 10*time.Second) }

// track makes r's batches visible to Extend.
func (s *PopService) track(r *PopRequest) {
	s.reqMu.Lock()
	s.reqs[r] = struct{}{}
	s.reqMu.Unlock()
}

// Extend extends the invisible time of every popped message, not handed back, whose
// invisible time ends within the margin from now. It does not wait for the broker.
// After Stop it does nothing: a message the consumer shuts down without consuming comes
// back once its invisible time is over, not an invisible time later.
func (s *PopService) Extend(now time.Time) {
	if s.isStopped() {
		return
	}
	s.reqMu.Lock()
	reqs := make([]*PopRequest, 0, len(s.reqs))
	for r := range s.reqs {
		if r.PQ.Dropped() && r.PQ.Count() == 0 {
			delete(s.reqs, r) // nothing left to extend, and no pop will add any
			continue
		}
		reqs = append(reqs, r)
	}
	s.reqMu.Unlock()
	margin := extendMargin(s.cfg.InvisibleTime)
	var due []int
	for _, r := range reqs {
		for _, b := range r.PQ.Batches() {
			due = b.DueForExtension(now, margin, s.cfg.MaxHold, due[:0])
			for _, i := range due {
				s.extend(r, b, i)
			}
		}
	}
}

// extend sends the extension of message i of b, marked extending.
func (s *PopService) extend(r *PopRequest, b *processqueue.PopBatch, i int) {
	sent := time.Now()
	s.counters.Extended.Add(1)
	s.changeInvisible(r, b.Entry(i).Handle, s.cfg.InvisibleTime, func(nh protocol.ExtraInfo, err error) {
		handle := ""
		if err == nil {
			handle = nh.String()
		} else {
			s.counters.ExtendFailed.Add(1)
			s.handFailed("extending a message's invisible time failed; it may be delivered again meanwhile", r.Queue.Topic, err)
		}
		action, delay, e := b.EndExtend(i, err == nil, handle, sent.Add(s.cfg.InvisibleTime))
		if action != processqueue.PopActionNone {
			s.apply(r, b, i, e, action, delay, false)
		}
	})
}
