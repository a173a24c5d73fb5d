package rebalance

import (
	"context"
	"errors"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/offset"
	"github.com/rmqpush/rmqpush/processqueue"
	"github.com/rmqpush/rmqpush/pull"
)

// StartFrom says where a group with no stored offset starts on a queue (Java's
// ConsumeFromWhere).
type StartFrom int

// Starting points.
const (
	StartFromLast StartFrom = iota
	StartFromFirst
	StartFromTimestamp
)

// Broker is what the Rebalancer needs from the client instance.
type Broker interface {
	// ClientID returns this client's id, as the brokers list it.
	ClientID() string
	// Queues returns the readable queues of topic's latest route, sorted.
	Queues(topic string) ([]message.Queue, bool)
	// ConsumerIDs returns the group's client ids as a broker serving topic knows them.
	ConsumerIDs(ctx context.Context, topic, group string) ([]string, error)
	// MaxOffset returns the offset after q's last message.
	MaxOffset(ctx context.Context, q message.Queue) (int64, error)
	// SearchOffset returns the offset of q's first message stored at or after the time.
	SearchOffset(ctx context.Context, q message.Queue, timestampMillis int64) (int64, error)
	// QueryConsumerOffset returns the group's offset of q stored on the broker; found
	// is false for a group with none.
	QueryConsumerOffset(ctx context.Context, group string, q message.Queue) (offset int64, found bool, err error)
	// HeartbeatSoon asks for a heartbeat without waiting.
	HeartbeatSoon()
	// RequestRouteRefresh asks for the routes to be fetched again without waiting.
	RequestRouteRefresh()
}

// Puller receives the pull requests of new queues.
type Puller interface {
	// Submit queues r's first pull.
	Submit(r *pull.Request)
}

// Config configures a Rebalancer.
type Config struct {
	Group      string           // the consumer group
	Clustering bool             // divide queues among members; broadcasting takes them all
	Strategy   AllocateStrategy // how queues are divided
	Broker     Broker           // the client instance
	Offsets    offset.Store     // persisted on release, read for a new queue's start
	Puller     Puller           // gets the pull requests of new queues
	Logger     logging.Logger   // nil: no logging

	// TakeoverGrace delays the start of a queue gained while the group has other
	// members, so that the member releasing it can persist its last offset first. Zero
	// starts gained queues at once, as Java does.
	TakeoverGrace time.Duration
	// TakeoverMaxWait bounds how long, after the grace, a gained queue waits for the
	// offset its previous owner commits to stop moving: members learn a route change at
	// different times (the one whose pulls fail at once, the others at their next
	// route poll), so a member that gains a queue because a broker left the routes may
	// gain it while its owner, not knowing yet, still consumes it. Zero: the grace
	// alone. The consumer uses its route poll interval plus twice the grace.
	TakeoverMaxWait time.Duration

	StartFrom      StartFrom     // where a queue with no stored offset starts
	StartTimestamp time.Time     // for StartFromTimestamp
	Interval       time.Duration // between rebalances besides Trigger (20 s)

	// Topics returns the subscribed topics, the retry topic included.
	Topics func() []string
	// Paused reports whether the consumer is suspended; rebalancing waits meanwhile.
	Paused func() bool
	// BeforeAdd is called before a queue is added; returning false skips the queue this
	// round (orderly consumption locks the queue on the broker here). May be nil.
	BeforeAdd func(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue) bool
	// BeforeRemove is called after a queue was marked dropped and before its offset is
	// persisted and forgotten: the consume service waits here for the listener calls in
	// flight on the queue, so their progress is persisted too. Returning false keeps the
	// queue (still dropped) for the next pass to try again: an orderly listener call
	// still running. May be nil.
	// release is true when the queue leaves this client and false when it restarts at a
	// new offset (its results are discarded already, so only an orderly call, which
	// must not overlap the new queue's, needs waiting for).
	BeforeRemove func(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue, release bool) bool
	// CancelAdd is called when BeforeAdd accepted a queue that was then not added (its
	// start offset unknown, or the pass cancelled): orderly consumption releases the lock
	// it took. ctx may be cancelled already. May be nil.
	CancelAdd func(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue)
	// AfterRemove is called once a queue's offset was persisted: release is true when
	// the queue leaves this client (orderly consumption unlocks it on the broker) and
	// false when it is about to be created again (restart). May be nil.
	AfterRemove func(ctx context.Context, q message.Queue, pq *processqueue.ProcessQueue, release bool)
	// PersistTimeout bounds the persist of a dropped queue's offset, which is not
	// cancelled with the pass (default 3 s).
	PersistTimeout time.Duration
	// Changed is called after a topic's assignment changed, with every queue of the
	// topic and the queues this client now has. May be nil.
	Changed func(topic string, all, mine []message.Queue)

	// Assigner, when set, makes the brokers assign the queues (QUERY_ASSIGNMENT, Java 5's
	// clientRebalance=false): see assignment.go. PopPuller then gets the pop requests
	// of the queues assigned in POP mode, which start as PopInitMode says
	// (protocol.InitModeMin or InitModeMax).
	Assigner    Assigner
	PopPuller   PopPuller
	PopInitMode int32
	// PopsInFlight is how many pops of a whole broker's queues (queue id -1) are kept
	// in flight at once (pull.PopRequest.InFlight); 0 or 1: one, as Java.
	PopsInFlight int
	// PopRetryTopic, when set, is told to consume the group's POP retry topic of topic
	// in PULL mode (on) or not: the brokers assign topic wholly in PULL or wholly in POP
	// mode. May be nil.
	PopRetryTopic func(topic string, on bool)
}

func (c *Config) check() error {
	switch {
	case c.Group == "":
		return errors.New("rebalance: no group")
	case c.Strategy == nil:
		return errors.New("rebalance: no allocation strategy")
	case c.Broker == nil:
		return errors.New("rebalance: no Broker")
	case c.Offsets == nil:
		return errors.New("rebalance: no offset store")
	case c.Puller == nil:
		return errors.New("rebalance: no Puller")
	case c.Topics == nil:
		return errors.New("rebalance: no Topics")
	case c.Interval <= 0:
		return errors.New("rebalance: Interval must be positive")
	case c.Assigner != nil && c.PopPuller == nil:
		return errors.New("rebalance: an Assigner needs a PopPuller")
	}
	return nil
}
