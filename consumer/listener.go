package consumer

import (
	"context"
	"math"

	"github.com/rmqpush/rmqpush/message"
)

// ConcurrentlyStatus is what a concurrent listener returns for a batch.
type ConcurrentlyStatus int

const (
	// ConsumeSuccess means the messages up to ConcurrentlyContext.AckIndex were
	// consumed; the rest are retried.
	ConsumeSuccess ConcurrentlyStatus = iota
	// ReconsumeLater means none of the messages was consumed; all are retried.
	ReconsumeLater
)

// String returns Java's name for the status.
func (s ConcurrentlyStatus) String() string {
	switch s {
	case ConsumeSuccess:
		return "CONSUME_SUCCESS"
	case ReconsumeLater:
		return "RECONSUME_LATER"
	default:
		return "UNKNOWN"
	}
}

// ConcurrentlyContext is a concurrent listener call's context. It is valid only during
// the call: each worker reuses one for all its calls, so a listener must not keep it.
type ConcurrentlyContext struct {
	// Queue is the queue the messages came from.
	Queue message.Queue
	// DelayLevelWhenNextConsume is the delay level of the retry of the messages not
	// acknowledged: 0 lets the broker choose (3 + reconsume times), -1 sends them to the
	// dead-letter queue at once, a positive value is a level (1s 5s 10s 30s 1m 2m ...).
	DelayLevelWhenNextConsume int
	// AckIndex is the index of the last message of the batch consumed when the listener
	// returns ConsumeSuccess; the messages after it are retried. It starts at
	// math.MaxInt32: all consumed.
	AckIndex int
}

// ConcurrentlyListener consumes batches of messages in any order, from many goroutines
// at once. A panic counts as ReconsumeLater.
type ConcurrentlyListener interface {
	// ConsumeConcurrently handles msgs (up to ConsumeMessageBatchMaxSize of one queue)
	// and says which succeeded: all (ConsumeSuccess, with cc.AckIndex to keep only the
	// first ones) or none (ReconsumeLater). ctx ends when the consumer shuts down.
	// The messages are the listener's to keep, except their bodies with WithLentBodies:
	// those are valid only until the call returns.
	ConsumeConcurrently(ctx context.Context, msgs []*message.Ext, cc *ConcurrentlyContext) ConcurrentlyStatus
}

// ConcurrentlyFunc adapts a function to a ConcurrentlyListener.
type ConcurrentlyFunc func(ctx context.Context, msgs []*message.Ext, cc *ConcurrentlyContext) ConcurrentlyStatus

// ConsumeConcurrently calls f.
func (f ConcurrentlyFunc) ConsumeConcurrently(ctx context.Context, msgs []*message.Ext, cc *ConcurrentlyContext) ConcurrentlyStatus {
	return f(ctx, msgs, cc)
}

// OrderlyStatus is what an orderly listener returns for a batch.
type OrderlyStatus int

const (
	// OrderlySuccess means the batch was consumed; the offset moves past it.
	OrderlySuccess OrderlyStatus = iota
	// SuspendCurrentQueueAMoment means the batch must be consumed again, after the
	// context's suspend time; later messages of the queue wait.
	SuspendCurrentQueueAMoment
)

// String returns Java's name for the status.
func (s OrderlyStatus) String() string {
	switch s {
	case OrderlySuccess:
		return "SUCCESS"
	case SuspendCurrentQueueAMoment:
		return "SUSPEND_CURRENT_QUEUE_A_MOMENT"
	default:
		return "UNKNOWN"
	}
}

// OrderlyContext is an orderly listener call's context. It is valid only during the
// call: each worker reuses one for all its calls, so a listener must not keep it.
type OrderlyContext struct {
	// Queue is the queue the messages came from.
	Queue message.Queue
	// SuspendCurrentQueueTimeMillis is how long to wait before consuming the batch again
	// after SuspendCurrentQueueAMoment; -1 (the default) means the consumer's
	// WithSuspendCurrentQueueTime. It is clamped to [10, 30000] ms.
	SuspendCurrentQueueTimeMillis int64
}

// OrderlyListener consumes each queue's messages one batch at a time, in offset order.
// A panic counts as SuspendCurrentQueueAMoment.
type OrderlyListener interface {
	// ConsumeOrderly handles msgs, the next messages of one queue in offset order, and
	// returns OrderlySuccess or SuspendCurrentQueueAMoment (retry them after
	// oc.SuspendCurrentQueueTimeMillis). ctx ends when the consumer shuts down.
	// The messages are the listener's to keep, except their bodies with WithLentBodies:
	// those are valid only until the call returns.
	ConsumeOrderly(ctx context.Context, msgs []*message.Ext, oc *OrderlyContext) OrderlyStatus
}

// orderlyListener reports whether l is consumed in order: an OrderlyListener that is
// not a ConcurrentlyListener too (one that is both is consumed concurrently).
func orderlyListener(l any) bool {
	_, concurrent := l.(ConcurrentlyListener)
	_, orderly := l.(OrderlyListener)
	return orderly && !concurrent
}

// OrderlyFunc adapts a function to an OrderlyListener.
type OrderlyFunc func(ctx context.Context, msgs []*message.Ext, oc *OrderlyContext) OrderlyStatus

// ConsumeOrderly calls f.
func (f OrderlyFunc) ConsumeOrderly(ctx context.Context, msgs []*message.Ext, oc *OrderlyContext) OrderlyStatus {
	return f(ctx, msgs, oc)
}

// defaultAckIndex is AckIndex before the listener changes it: everything consumed.
const defaultAckIndex = math.MaxInt32
