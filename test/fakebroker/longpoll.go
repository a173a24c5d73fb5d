package fakebroker

import (
	"slices"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// Long polling, as PullRequestHoldService does it: a pull with the suspend flag that finds
// nothing (PULL_NOT_FOUND) is held on its queue. It is answered, by running the pull
// again without the right to suspend, when a message its filter matches arrives at or
// beyond its offset, when its suspend time ends (then usually PULL_NOT_FOUND), or at the
// periodic hold check once the queue has grown past its offset (a message its filter did
// not match arrived). A held pull's answer is written in JSON whatever the request's
// serialization: 4.9.8 writes it outside the request's processing, with a command whose
// serialization was never copied from the request (golden g_java_binary_longpoll).
//
// The real service checks timeouts every 5 s, so a real broker answers a held pull up to
// 5 s after its suspend time; here each held pull has its own timer and is answered on
// time.

// maxHeld bounds the pulls a broker holds; beyond it a pull that would be held is
// answered PULL_NOT_FOUND at once.
const maxHeld = 1 << 20

type heldPull struct {
	sc     conn
	req    *remoting.Command
	h      protocol.PullMessageRequest
	filter *filter
	cq     *consumeQueue
	task   *task
}

// hold keeps a pull on its queue. It runs under b.mu and reports false when the broker
// holds too many.
func (b *Broker) hold(sc conn, req *remoting.Command, h *protocol.PullMessageRequest, f *filter, cq *consumeQueue, suspend time.Duration) bool {
	if len(b.held) >= maxHeld {
		return false
	}
	req.Body = nil // a pull has none; a peer's must not be kept for the whole suspend
	hp := &heldPull{sc: sc, req: req, h: *h, filter: f, cq: cq}
	cq.held = append(cq.held, hp)
	b.held[hp] = struct{}{}
	hp.task = b.c.sched.after(suspend, func() { b.expireHeld(hp) })
	if b.holdTask == nil {
		b.armHoldCheck()
	}
	return true
}

// armHoldCheck schedules the periodic hold check. It runs under b.mu.
func (b *Broker) armHoldCheck() {
	gen := b.runGen
	b.holdTask = b.c.sched.after(b.cfg.holdCheck, func() { b.holdCheck(gen) })
}

// dropHeld forgets a held pull without answering it. It runs under b.mu.
func (b *Broker) dropHeld(hp *heldPull) {
	if _, ok := b.held[hp]; !ok {
		return
	}
	delete(b.held, hp)
	b.c.sched.cancel(hp.task)
	hp.cq.held = slices.DeleteFunc(hp.cq.held, func(x *heldPull) bool { return x == hp })
}

// arrived returns the pulls held on q that a new message with tags hash code tags and
// properties props wakes (PullRequestHoldService.notifyMessageArriving), removing them.
// It runs under b.mu.
func (b *Broker) arrived(q *consumeQueue, tags int32, props *jprops) []*heldPull {
	b.popsArrived(q) // 200050_pop_message.go
	if len(q.held) == 0 {
		return nil
	}
	var wake []*heldPull
	max := q.maxOffset()
	for _, hp := range q.held {
		if max > hp.h.QueueOffset && hp.filter.matchesArrival(tags, props) {
			wake = append(wake, hp)
		}
	}
	for _, hp := range wake {
		b.dropHeld(hp)
	}
	return wake
}

// expireHeld answers a held pull whose suspend time ended.
func (b *Broker) expireHeld(hp *heldPull) {
	b.mu.Lock()
	_, ok := b.held[hp]
	if ok {
		b.dropHeld(hp)
	}
	b.mu.Unlock()
	if ok {
		b.answerHeld([]*heldPull{hp})
	}
}

// holdCheck is the periodic check: it wakes every held pull whose queue grew past its
// offset, and runs again while pulls are held.
func (b *Broker) holdCheck(gen uint64) {
	var wake []*heldPull
	b.mu.Lock()
	if gen != b.runGen {
		b.mu.Unlock()
		return // armed by a run that ended
	}
	b.holdTask = nil
	for hp := range b.held {
		if hp.cq.maxOffset() > hp.h.QueueOffset {
			wake = append(wake, hp)
		}
	}
	for _, hp := range wake {
		b.dropHeld(hp)
	}
	if len(b.held) > 0 {
		b.armHoldCheck()
	}
	b.mu.Unlock()
	b.answerHeld(wake)
}

// answerHeld runs each pull again, not allowed to suspend, and sends the answer in JSON.
// It must run without b.mu.
func (b *Broker) answerHeld(pulls []*heldPull) {
	for _, hp := range pulls {
		resp := b.pull(hp.sc, hp.req, &hp.h, false)
		if resp == nil || hp.req.IsOneway() {
			continue
		}
		resp.Serialize = remoting.SerializeJSON
		b.ep.respond(hp.sc, resp)
	}
}
