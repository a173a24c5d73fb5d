package integration

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// Shutdown does not consume the cache: an orderly task already running ends after its
// listener call instead of taking batch after batch until maxConsumeContinuously.
func TestOrderlyShutdownStopsTakingFromCache(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1))
	produceToQueues(t, c, "t", 1, 100)
	var afterShutdown atomic.Int64
	var shuttingDown atomic.Bool
	started := make(chan struct{}, 1)
	pc := startOrderly(t, "og", "t", fastOptions(c),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.OrderlyContext) consumer.OrderlyStatus {
			if shuttingDown.Load() {
				afterShutdown.Add(1)
			}
			select {
			case started <- struct{}{}:
			default:
			}
			time.Sleep(50 * time.Millisecond)
			return consumer.OrderlySuccess
		})
	<-started
	time.Sleep(300 * time.Millisecond) // lets the pulls cache the other messages
	shuttingDown.Store(true)
	shutdown(t, pc)
	// Before the fix, the whole cache (~100 calls); a call or two may start while
	// Shutdown stops rebalancing and pulling.
	require.LessOrEqual(t, afterShutdown.Load(), int64(3), "listener calls started after Shutdown began")
}

// A Shutdown with a deadline the running call ends within persists what was consumed
// and releases the broker lock: the task does not keep consuming the cache past the
// deadline, leaving a call in progress for the removal to find.
func TestOrderlyShutdownDeadlinePersistsAndUnlocks(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1))
	b := c.Brokers()[0]
	produceToQueues(t, c, "t", 1, 100)
	var consumed atomic.Int64
	started := make(chan struct{}, 1)
	pc := startOrderly(t, "og", "t", fastOptions(c),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.OrderlyContext) consumer.OrderlyStatus {
			select {
			case started <- struct{}{}:
			default:
			}
			time.Sleep(50 * time.Millisecond)
			consumed.Add(int64(len(msgs)))
			return consumer.OrderlySuccess
		})
	<-started
	time.Sleep(300 * time.Millisecond) // lets the pulls cache the other messages
	// The cache holds ~5 s of calls, well past the deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	require.NoError(t, pc.Shutdown(ctx))
	off, _ := b.CommittedOffset("og", "t", 0)
	require.Empty(t, b.Locks("og"), "lock released at shutdown")
	require.Equal(t, consumed.Load(), off, "committed offset = consumed")
}
