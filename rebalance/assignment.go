package rebalance

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
	"github.com/rmqpush/rmqpush/pull"
)

// Server-side rebalancing (Java 5's clientRebalance=false): each pass asks a broker
// which queues of the topic this client consumes, and how (QUERY_ASSIGNMENT), instead
// of allocating them itself. Queues in PULL mode go through the pull path as client
// rebalancing's do (update); queues in POP mode (a queue id of -1 means any queue of
// the topic on that broker) get a PopRequest each, sent to the PopPuller. Unlike a
// pulled queue, a popped queue that goes away needs nothing persisted: every message is
// acked by its own handle, so the messages popped from it are still consumed and acked.
//
// As Java does, a topic whose queues are all POP stops consuming the group's POP retry
// topic of it in PULL mode, and a topic whose queues are all PULL (the operator set the
// group back to PULL) consumes it, so messages revived there while the group popped are
// not left behind (PopRetryTopic). Unlike Java, a broker that does not know
// QUERY_ASSIGNMENT (REQUEST_CODE_NOT_SUPPORTED: a 4.x broker) makes the topic fall back
// to client rebalancing for good, where Java would consume nothing; the topic's POP
// queues are dropped then, so no queue is both popped and pulled.

// Assigner asks the brokers for this client's queues (the client instance).
type Assigner interface {
	// QueryAssignment returns the queues of topic the group's client consumes, and how.
	QueryAssignment(ctx context.Context, topic, group, strategy string, model protocol.MessageModel) ([]protocol.QueueAssignment, error)
}

// PopPuller receives the pop requests of new POP queues.
type PopPuller interface {
	// Submit queues r's first pop.
	Submit(r *pull.PopRequest)
}

// PopRequests returns the pop requests of the queues assigned in POP mode.
func (r *Rebalancer) PopRequests() []*pull.PopRequest {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*pull.PopRequest, 0, len(r.pops))
	for _, req := range r.pops {
		out = append(out, req)
	}
	return out
}

// brokerAssigns reports whether topic's assignment comes from the brokers.
func (r *Rebalancer) brokerAssigns(topic string) bool {
	if r.cfg.Assigner == nil {
		return false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return !r.clientSide[topic]
}

// rebalanceByBroker is Java's getRebalanceResultFromBroker.
func (r *Rebalancer) rebalanceByBroker(ctx context.Context, topic string) {
	model := protocol.Clustering
	if !r.cfg.Clustering {
		model = protocol.Broadcasting
	}
	as, err := r.cfg.Assigner.QueryAssignment(ctx, topic, r.cfg.Group, r.cfg.Strategy.Name(), model)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return
	case errors.Is(err, protocol.ResponseCodeError(protocol.ResponseRequestCodeNotSupported)):
		r.logf(logging.LevelWarn, "the broker does not assign queues (QUERY_ASSIGNMENT not supported: a 4.x broker); this client allocates them itself", message.Queue{Topic: topic}, err)
		r.mu.Lock()
		r.clientSide[topic] = true
		r.mu.Unlock()
		// From now on this client pulls the topic's queues: the queues it popped so far
		// must stop being popped, or their messages would be consumed twice, by pops and
		// by pulls; what was revived for POP is consumed by pulling, as when the
		// operator sets the group back to PULL.
		if r.updatePop(topic, nil) && r.cfg.PopRetryTopic != nil && !strings.HasPrefix(topic, client.RetryTopicPrefix) {
			r.cfg.PopRetryTopic(topic, true)
		}
		r.rebalanceTopic(ctx, topic)
		return
	case errors.Is(err, client.ErrNoAssignment):
		// No route or no member list on the broker yet (our first heartbeat may not have
		// reached it), or a strategy it does not know: keep what we have.
		r.logf(logging.LevelWarn, "the broker has no assignment for the topic yet; keeping the current queues", message.Queue{Topic: topic}, err)
		r.cfg.Broker.HeartbeatSoon()
		r.retrySoon()
		return
	default:
		r.logf(logging.LevelWarn, "cannot get the assignment from the brokers; keeping the current queues", message.Queue{Topic: topic}, err)
		r.retrySoon()
		return
	}
	var pulled, popped []message.Queue
	for _, a := range as {
		if a.Queue.Topic != topic {
			continue // an answer for another topic is not ours to use
		}
		if a.Mode == protocol.RequestModePop {
			popped = append(popped, a.Queue)
		} else {
			pulled = append(pulled, a.Queue)
		}
	}
	slices.SortFunc(pulled, message.Queue.Compare)
	slices.SortFunc(popped, message.Queue.Compare)
	pulled, popped = slices.Compact(pulled), slices.Compact(popped)
	if r.cfg.PopRetryTopic != nil && !strings.HasPrefix(topic, client.RetryTopicPrefix) {
		switch {
		case len(popped) == 0 && len(pulled) > 0:
			r.cfg.PopRetryTopic(topic, true) // back to pull: consume what was revived for POP
		case len(popped) > 0 && len(pulled) == 0:
			r.cfg.PopRetryTopic(topic, false)
		}
	}
	all, ok := r.cfg.Broker.Queues(topic)
	if !ok {
		all = pulled // a topic the instance has no route of (a retry topic not fetched yet)
	}
	changed := r.update(ctx, topic, all, pulled, false)
	if r.updatePop(topic, popped) {
		changed = true
	}
	if changed && r.cfg.Changed != nil {
		r.cfg.Changed(topic, all, append(slices.Clone(pulled), popped...))
	}
}

// updatePop makes topic's POP queues equal mine and reports whether they changed. A
// queue not popped for too long is created again, as Java does.
func (r *Rebalancer) updatePop(topic string, mine []message.Queue) bool {
	now := time.Now()
	var added []*pull.PopRequest
	changed := false
	r.mu.Lock()
	for q, req := range r.pops {
		if q.Topic != topic {
			continue
		}
		if !slices.Contains(mine, q) || req.PQ.PopExpired(now) {
			req.PQ.SetDropped() // its popped messages are still consumed and acked
			delete(r.pops, q)
			changed = true
			r.logf(logging.LevelInfo, "POP queue dropped", q, nil)
		}
	}
	for _, q := range mine {
		if _, ok := r.pops[q]; ok {
			continue
		}
		inFlight := 1
		if q.QueueID < 0 {
			inFlight = r.cfg.PopsInFlight // the broker's queues: each pop reads others
		}
		req := pull.NewPopRequest(q, processqueue.NewPopQueue(now), r.cfg.PopInitMode, inFlight)
		r.pops[q] = req
		added = append(added, req)
		changed = true
	}
	r.mu.Unlock()
	for _, req := range added {
		r.logf(logging.LevelInfo, "POP queue added", req.Queue, nil)
		r.cfg.PopPuller.Submit(req)
	}
	return changed
}

// dropPops drops every POP queue (shutdown, unsubscribed topics). It runs under
// passMu.
func (r *Rebalancer) dropPops(keep func(topic string) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for q, req := range r.pops {
		if keep == nil || !keep(q.Topic) {
			req.PQ.SetDropped()
			delete(r.pops, q)
		}
	}
}
