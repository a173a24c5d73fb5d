package rebalance

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/pull"
)

// passState is what one pass learnt of the brokers, so that what holds for the whole
// group is asked once per pass rather than once per topic or queue:
//
//   - The member list is the group's, not the topic's: every topic served by the same
//     brokers gets the same union of answers, so a pass asks once per broker set (250
//     topics on 2 brokers: 2 calls, not 500).
//   - A broker that could not tell a queue's start offset or committed offset (down, or
//     never answering) is not asked for its other queues this pass; they are tried
//     again soon.
//
// A broker that does not answer thus costs a pass one request timeout, not one per topic
// or queue. The methods accept a nil receiver (a topic rebalanced outside a pass) and
// then remember nothing.
type passState struct {
	members map[string]memberAnswer // by broker set; only the pass's goroutine uses it
	// byTopic indexes the assignment by topic as the pass began, so that a topic's pass
	// reads its own queues rather than every queue (250 topics × 2,000 queues: half a
	// million map steps a pass). Topic t's queues change only in t's turn of the pass.
	byTopic map[string][]*pull.Request

	mu    sync.Mutex // add's goroutines, one per broker
	unans map[string]bool
}

// errUnanswered stands for an answer not asked for: the broker failed to answer
// another call of this pass.
var errUnanswered = errors.New("rebalance: the broker did not answer earlier in this pass")

type memberAnswer struct {
	ids []string
	err error
}

// newPassState begins a pass.
func (r *Rebalancer) newPassState() *passState {
	p := &passState{members: make(map[string]memberAnswer), unans: make(map[string]bool),
		byTopic: make(map[string][]*pull.Request)}
	r.mu.RLock()
	for q, req := range r.table {
		p.byTopic[q.Topic] = append(p.byTopic[q.Topic], req)
	}
	r.mu.RUnlock()
	return p
}

// requestsOf returns topic's pull requests in the table; r.mu is held. Outside a pass
// it looks at every request.
func (r *Rebalancer) requestsOf(topic string) []*pull.Request {
	var out []*pull.Request
	if r.pass == nil {
		for q, req := range r.table {
			if q.Topic == topic {
				out = append(out, req)
			}
		}
		return out
	}
	for _, req := range r.pass.byTopic[topic] {
		if r.table[req.Queue] == req { // not dropped since the pass began
			out = append(out, req)
		}
	}
	return out
}

func (p *passState) unanswered(broker string) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unans[broker]
}

func (p *passState) setUnanswered(broker string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.unans[broker] = true
	p.mu.Unlock()
}

// endPass forgets the pass's state and logs (at debug level) what it cost.
func (r *Rebalancer) endPass(began time.Time, topics int) {
	r.pass = nil
	if logging.Enabled(r.log, logging.LevelDebug) {
		r.mu.RLock()
		queues := len(r.table)
		r.mu.RUnlock()
		r.log.Log(logging.LevelDebug, "rebalance pass done", "group", r.cfg.Group, "topics", topics, "queues", queues,
			"took", time.Since(began))
	}
}

// consumerIDs returns the group's members as the brokers of topic (whose queues are
// queues) list them, asking them only when this pass has not asked the same brokers;
// repeated says the answer is one this pass already had. The ids must not be modified.
func (r *Rebalancer) consumerIDs(ctx context.Context, topic string, queues []message.Queue) (ids []string, repeated bool, err error) {
	p := r.pass
	if p == nil {
		ids, err = r.cfg.Broker.ConsumerIDs(ctx, topic, r.cfg.Group)
		return ids, false, err
	}
	key := brokerSet(queues)
	if a, ok := p.members[key]; ok {
		return a.ids, true, a.err
	}
	ids, err = r.cfg.Broker.ConsumerIDs(ctx, topic, r.cfg.Group)
	if ctx.Err() == nil {
		p.members[key] = memberAnswer{ids: ids, err: err}
	}
	return ids, false, err
}

// brokerSet names the brokers of queues, sorted.
func brokerSet(queues []message.Queue) string {
	var names []string
	for _, q := range queues {
		if !slices.Contains(names, q.BrokerName) {
			names = append(names, q.BrokerName)
		}
	}
	slices.Sort(names)
	return strings.Join(names, "\x00")
}
