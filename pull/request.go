package pull

import (
	"sync/atomic"
	"time"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/offset"
	"github.com/rmqpush/rmqpush/processqueue"
)

// Request is one queue's pull request. Exactly one exists per assigned queue; it moves
// between the service's queue, the broker and the delay heap, and only its current
// holder touches NextOffset. Create one with NewRequest when the queue is assigned.
type Request struct {
	Queue message.Queue              // the queue pulled
	PQ    *processqueue.ProcessQueue // its cache
	// NextOffset is the queue offset the next pull starts at.
	NextOffset int64
	// Lease is the queue's assignment in the offset store, which the pull service and
	// the consume services write its offset through: writes that outlive the
	// assignment are ignored. The rebalancer sets it before the first pull; without it
	// (the zero Lease) nothing writes the queue's offset.
	Lease offset.Lease
	// Held holds the lent bodies of the queue's cached messages for orderly consumption
	// with Config.LendBodies: the service caches through it, and the orderly consume
	// service commits through it (HeldBodies.Commit).
	Held HeldBodies

	brokerID  int64 // the node the broker suggested pulling from next; 0 is the master
	brokerMax int64 // the queue's max offset in the last answer; -1 before the first
	// answered is when the FOUND answer the next pull follows was read, for the
	// turnaround; zero when the next pull does not follow one or was held back.
	answered time.Time
	refused  atomic.Pointer[string] // why the broker refuses to filter this queue's pulls (filter_refused.go)

	// The pull in flight, kept here rather than in a closure and header allocated per
	// pull: a request has at most one pull in flight, and its answer's callback is made
	// once (Service.pull).
	header   protocol.PullMessageRequest
	inflight pullState
	onAnswer func(*client.PullResult, error)
}

// pullState is what a pull's answer needs to know of the pull.
type pullState struct {
	sub    protocol.SubscriptionData // the subscription it was sent with
	sent   time.Time
	commit offset.PullCommit // the offset it carries, if any
}

// NewRequest returns the pull request of a newly assigned queue, starting at offset.
func NewRequest(q message.Queue, pq *processqueue.ProcessQueue, offset int64) *Request {
	return &Request{Queue: q, PQ: pq, NextOffset: offset, brokerMax: -1}
}
