package pull

import (
	"errors"
	"time"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/offset"
	"github.com/rmqpush/rmqpush/remoting"
)

// Delays before a request is pulled again: Java's effective values, and two of
// rmqpush's own, for errors Java waits a second after.
const (
	DelayFlowControl       = 50 * time.Millisecond
	DelayBrokerFlowControl = 20 * time.Millisecond
	DelayError             = time.Second
	DelayPaused            = time.Second
	// DelayAwaitHeartbeat follows SUBSCRIPTION_NOT_EXIST / _NOT_LATEST /
	// SUBSCRIPTION_GROUP_NOT_EXIST: the heartbeat just sent takes milliseconds.
	DelayAwaitHeartbeat = 50 * time.Millisecond
	// DelayConnError follows a connection that could not be made or was lost, so
	// consumption resumes within half a second of a restarted broker answering.
	DelayConnError = 500 * time.Millisecond
	// DelayFilterRefused is how often a queue whose broker keeps refusing to filter by
	// the subscription's expression is asked again (filter_refused.go).
	DelayFilterRefused = 30 * time.Second
)

// Broker is what the service needs from the client instance.
type Broker interface {
	// FindBrokerAddr returns the address of broker brokerName's node brokerID (or,
	// unless onlyThisBroker, another node of it), whether that is a slave, and whether
	// one was found.
	FindBrokerAddr(brokerName string, brokerID int64, onlyThisBroker bool) (addr string, slave, found bool)
	// PullAsync sends a pull; callback gets its result or error, on another goroutine.
	// bodies, when not nil, lends the buffer the answer's body is read into.
	PullAsync(addr string, h *protocol.PullMessageRequest, timeout time.Duration, bodies remoting.BodySource, callback func(*client.PullResult, error)) error
	// RequestRouteRefresh asks for the routes to be fetched again without waiting.
	RequestRouteRefresh()
	// HeartbeatSoon asks for a heartbeat to every broker without waiting.
	HeartbeatSoon()
}

// Dispatcher receives what a pull cached: the consume service. Dispatch must not block.
// msgs are the messages Put added to r.PQ (never a duplicate); dispatch is the
// ProcessQueue's orderly "start a consume task" answer. lease is nil unless bodies are
// lent (Config.LendBodies); then msgs' bodies are valid while it is held, and the
// dispatcher Acquires a reference for each listener call it queues on them and Releases
// it when the call, its send-backs and the removal of its messages are over. With
// Config.Orderly the service holds the lease in r.Held instead, until the consumer's
// r.Held.Commit takes msgs off the ProcessQueue (lend.go).
type Dispatcher interface {
	// Dispatch hands over what a pull of r cached. It runs on the read loop of the
	// connection the pull's answer came on.
	Dispatch(r *Request, msgs []*message.Ext, dispatch bool, lease *Lease)
}

// Subscriptions looks up the subscription of a topic.
type Subscriptions interface {
	// Subscription returns topic's subscription, if the consumer has one.
	Subscription(topic string) (protocol.SubscriptionData, bool)
}

// Limits are the flow-control thresholds. Count and SizeMiB apply per queue; MaxSpan
// applies to concurrent consumption only (0 turns it off).
type Limits struct {
	Count   int64 // cached messages (PullThresholdForQueue)
	SizeMiB int64 // cached body MiB (PullThresholdSizeForQueue)
	MaxSpan int64 // offset span of the cache (ConsumeConcurrentlyMaxSpan)
}

// Config configures a Service.
type Config struct {
	Group      string           // the consumer group, on the wire
	Namespace  string           // the group's namespace: pulled topics lose it before dispatch
	Broker     Broker           // the client instance
	Dispatcher Dispatcher       // the consume service
	Subs       Subscriptions    // the consumer's subscriptions
	Offsets    offset.Store     // where the commit offset of a pull comes from
	Decoder    *message.Decoder // decodes pulled bodies
	Logger     logging.Logger   // nil: no logging

	// Limits returns the flow-control limits of a queue; the consumer derives them from
	// the per-queue and per-topic options.
	Limits func(q message.Queue) Limits

	BatchSize      int32         // pullBatchSize (32)
	Interval       time.Duration // pause after a pull that found messages (0)
	SuspendTimeout time.Duration // how long the broker may hold a pull (15 s)
	CallTimeout    time.Duration // how long to wait for a held pull's answer (30 s)
	// PostSubscription sends the expression with every pull instead of relying on the
	// heartbeat (Java's postSubscriptionWhenPull).
	PostSubscription bool
	// Orderly marks an orderly consumer: no span check, and in clustering a queue is only
	// pulled while its broker lock is held.
	Orderly bool
	// Clustering sends the commit offset with pulls (broadcasting keeps offsets locally).
	Clustering bool
	// LendBodies reads pull answers into reused buffers, lent to the Dispatcher's
	// listener calls with a Lease (lend.go).
	LendBodies bool

	// Paused reports whether the consumer is suspended.
	Paused func() bool
	// OnOffsetIllegal is called, without blocking, when the broker says a queue's offset
	// is out of range: the queue's ProcessQueue is already marked dropped, and next is the
	// broker's corrected offset. The owner stores it, persists and rebalances.
	OnOffsetIllegal func(r *Request, next int64)
	// Filter, when set, keeps from the listener the pulled messages it returns false
	// for, after the tag check (Java's FilterMessageHook); q is the queue on the wire.
	Filter func(q message.Queue, m *message.Ext) bool
	// OnPulled reports each pull, for statistics and hooks: rt from sending it to its
	// answer, the messages found, and err when it failed (no answer, or a broker error).
	OnPulled func(q message.Queue, rt time.Duration, found int, err error)
}

func (c *Config) check() error {
	switch {
	case c.Broker == nil:
		return errors.New("pull: no Broker")
	case c.Dispatcher == nil:
		return errors.New("pull: no Dispatcher")
	case c.Subs == nil:
		return errors.New("pull: no Subscriptions")
	case c.Offsets == nil:
		return errors.New("pull: no offset store")
	case c.Limits == nil:
		return errors.New("pull: no Limits")
	case c.BatchSize <= 0:
		return errors.New("pull: BatchSize must be positive")
	case c.SuspendTimeout <= 0 || c.CallTimeout <= c.SuspendTimeout:
		return errors.New("pull: CallTimeout must exceed a positive SuspendTimeout")
	}
	return nil
}

// setDefaults fills what a Config or PopConfig may leave nil: no logging, a fresh
// decoder, a consumer never paused.
func setDefaults(log *logging.Logger, dec **message.Decoder, paused *func() bool) {
	if *log == nil {
		*log = logging.Nop()
	}
	if *dec == nil {
		*dec = &message.Decoder{}
	}
	if *paused == nil {
		*paused = func() bool { return false }
	}
}
