package consumer

import (
	"context"
	"time"

	"github.com/rmqpush/rmqpush/message"
)

// Hook is a value implementing any of the Hook* interfaces of this package; WithHooks
// installs it, and the consumer calls every interface it implements (franz-go's kgo
// hooks work the same way). Plugins for metrics and tracing (plugin/rmqotel) are hooks.
//
// Hooks run on the consumer's own goroutines — consume workers, a connection's read
// loop, the scheduler — and must be quick and must not block; a hook that panics is a
// bug in the hook and is not recovered. Values passed by pointer are valid only during
// the call. A consumer without hooks pays nothing for them: no allocation and no clock
// read on the consume path.
type Hook any

// HookNewConsumer is told about the consumer the hook was installed on, at the end of
// NewPushConsumer: the place to register gauges that read PushConsumer.Stats.
type HookNewConsumer interface {
	// OnNewConsumer is called once, with the new consumer.
	OnNewConsumer(c *PushConsumer)
}

// HookConsumerShutdown is told when the consumer has shut down (or a failed Start has
// undone what it started): the place to unregister what OnNewConsumer registered.
type HookConsumerShutdown interface {
	// OnConsumerShutdown is called once, at the end of Shutdown.
	OnConsumerShutdown(c *PushConsumer)
}

// HookConsumeStart is called on the consume worker just before each listener call. The
// context it returns is passed on to the next hook and then to the listener, so a
// tracing hook can put the call's span in it; return ctx itself to leave it as it is.
type HookConsumeStart interface {
	// OnConsumeStart is called with the call's messages; call.Took, Status, Success,
	// AckIndex and ReturnType are not set yet.
	OnConsumeStart(ctx context.Context, call *ConsumeCall) context.Context
}

// HookConsumeEnd is called on the consume worker after each listener call returned (or
// panicked), with the context the listener got, before the result is applied (offsets,
// send-backs).
type HookConsumeEnd interface {
	// OnConsumeEnd is called with every field of call set.
	OnConsumeEnd(ctx context.Context, call *ConsumeCall)
}

// HookPull is called for every pull answer, found messages or not, and for every pull
// that failed, on the goroutine that got the answer (a connection's read loop).
type HookPull interface {
	// OnPull reports one pull of queue q from its broker.
	OnPull(e PullEvent)
}

// HookSendBack is called after each message handed back to the broker for a later
// retry (CONSUMER_SEND_MSG_BACK, or its fallback, a copy sent to the retry topic) or to
// the dead-letter queue, and after each attempt at it that failed.
type HookSendBack interface {
	// OnSendBack reports one message's send-back.
	OnSendBack(e SendBackEvent)
}

// HookLocalRetry is called when messages are to be consumed again by this consumer
// instead of by the broker's retry topic: a concurrent batch whose send-back and its
// fallback both failed (again in 5 s), or an orderly batch suspended
// (SuspendCurrentQueueAMoment, again after the suspend time).
type HookLocalRetry interface {
	// OnLocalRetry reports messages to be consumed again here.
	OnLocalRetry(e LocalRetryEvent)
}

// ConsumeCall describes one listener call, for HookConsumeStart and HookConsumeEnd.
// Each consume worker reuses one: a hook must not keep it past its call.
type ConsumeCall struct {
	Group    string         // the consumer group
	ClientID string         // the consumer's client id (ip@instance)
	Model    MessageModel   // clustering or broadcasting
	Orderly  bool           // an orderly listener's call
	Queue    message.Queue  // the queue the messages came from
	Msgs     []*message.Ext // the messages, in offset order; their CachedAt says when they were cached
	Begin    time.Time      // when the listener call began

	// Set for HookConsumeEnd.
	Took       time.Duration     // how long the listener call took
	Status     string            // the listener's status, by Java's name (CONSUME_SUCCESS, RECONSUME_LATER, SUCCESS, SUSPEND_CURRENT_QUEUE_A_MOMENT)
	Success    bool              // the call returned ConsumeSuccess or OrderlySuccess
	AckIndex   int               // the index of the last message consumed; -1 when none was
	ReturnType ConsumeReturnType // how the call ended, as Java's ConsumeReturnType

	traceRequestID string // the message trace's request id for the call (WithMessageTrace)
}

// ConsumeReturnType says how a listener call ended, as Java's ConsumeReturnType (whose
// ordinal message traces record as the context code).
type ConsumeReturnType int

// Java's ConsumeReturnType values, in Java's order.
const (
	ReturnSuccess   ConsumeReturnType = iota // the listener returned success
	ReturnTimeout                            // it returned, after ConsumeTimeout or longer
	ReturnException                          // it panicked
	ReturnNull                               // (Java only: the listener returned null)
	ReturnFailed                             // it returned ReconsumeLater, SuspendCurrentQueueAMoment or an unknown status
)

// String returns Java's name.
func (r ConsumeReturnType) String() string {
	switch r {
	case ReturnSuccess:
		return "SUCCESS"
	case ReturnTimeout:
		return "TIME_OUT"
	case ReturnException:
		return "EXCEPTION"
	case ReturnNull:
		return "RETURNNULL"
	case ReturnFailed:
		return "FAILED"
	default:
		return "UNKNOWN"
	}
}

// PullEvent describes one pull, for HookPull.
type PullEvent struct {
	Group    string        // the consumer group
	ClientID string        // the consumer's client id
	Queue    message.Queue // the queue pulled; Queue.BrokerName names the broker
	Took     time.Duration // from sending the pull to its answer (long polls included)
	Found    int           // messages the answer held (0 for no new message)
	Err      error         // why the pull failed; nil when the broker answered
}

// SendBackEvent describes one message's send-back, for HookSendBack.
type SendBackEvent struct {
	Group      string        // the consumer group
	ClientID   string        // the consumer's client id
	Msg        *message.Ext  // the message (a copy of it for a send-back of the consume timeout, taken when its call was found past the timeout)
	DelayLevel int32         // the delay level asked for (0: the broker's choice; -1: dead letter)
	DeadLetter bool          // the send-back put the message in %DLQ%<group>: without Fallback, delay level -1 or ReconsumeTimes at MaxReconsumeTimes; with Fallback (the delay level is not sent), ReconsumeTimes+1 past MaxReconsumeTimes; never with Err
	Fallback   bool          // CONSUMER_SEND_MSG_BACK failed and a copy was sent to the retry topic instead
	Took       time.Duration // how long it took, fallback included
	Err        error         // non-nil when the message could not be handed back at all
}

// LocalRetryEvent describes messages to be consumed again here, for HookLocalRetry.
type LocalRetryEvent struct {
	Group    string        // the consumer group
	ClientID string        // the consumer's client id
	Queue    message.Queue // the queue of the messages
	Count    int           // how many messages
	Delay    time.Duration // after how long
}

// hookSet holds the installed hooks sorted by the interfaces they implement, so a call
// site loops over exactly the hooks it concerns and one without any costs a length check.
type hookSet struct {
	newConsumer []HookNewConsumer
	shutdown    []HookConsumerShutdown
	start       []HookConsumeStart
	end         []HookConsumeEnd
	pull        []HookPull
	sendBack    []HookSendBack
	retry       []HookLocalRetry
}

func newHookSet(hooks []Hook) hookSet {
	var s hookSet
	for _, h := range hooks {
		if x, ok := h.(HookNewConsumer); ok {
			s.newConsumer = append(s.newConsumer, x)
		}
		if x, ok := h.(HookConsumerShutdown); ok {
			s.shutdown = append(s.shutdown, x)
		}
		if x, ok := h.(HookConsumeStart); ok {
			s.start = append(s.start, x)
		}
		if x, ok := h.(HookConsumeEnd); ok {
			s.end = append(s.end, x)
		}
		if x, ok := h.(HookPull); ok {
			s.pull = append(s.pull, x)
		}
		if x, ok := h.(HookSendBack); ok {
			s.sendBack = append(s.sendBack, x)
		}
		if x, ok := h.(HookLocalRetry); ok {
			s.retry = append(s.retry, x)
		}
	}
	return s
}

// implementsAny reports whether h implements at least one hook interface.
func implementsAny(h Hook) bool {
	s := newHookSet([]Hook{h})
	return len(s.newConsumer)+len(s.shutdown)+len(s.start)+len(s.end)+len(s.pull)+len(s.sendBack)+len(s.retry) > 0
}

// consumeHooked reports whether listener calls have hooks around them.
func (s *hookSet) consumeHooked() bool { return len(s.start)+len(s.end) > 0 }

// beginCall runs the start hooks and returns the listener's context.
func (s *hookSet) beginCall(ctx context.Context, call *ConsumeCall) context.Context {
	for _, h := range s.start {
		ctx = h.OnConsumeStart(ctx, call)
	}
	return ctx
}

// endCall runs the end hooks.
func (s *hookSet) endCall(ctx context.Context, call *ConsumeCall) {
	for _, h := range s.end {
		h.OnConsumeEnd(ctx, call)
	}
}
