package integration

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/logging/logtest"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// A queue handed over while its listener call runs stays with its old owner, dropped,
// until the call ends, and its broker lock is renewed meanwhile: the next owner starts
// only after the old owner persisted the call's result and unlocked the queue, never
// beside the call once the broker lock would have expired. (Scaled: lock expiry 1 s,
// renewal 100 ms; in production a call outliving the 60 s expiry.)
func TestOrderlyHandoverWaitsForRunningCall(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 2), fakebroker.WithLockExpiry(time.Second))
	var mu sync.Mutex
	aDone := map[int32]bool{} // queue id -> member a's long call on it ended
	aStarted := make(chan struct{}, 2)
	opts := func(name string) []consumer.Option {
		return fastOptions(c, consumer.WithInstanceName(name), consumer.WithLockRenewInterval(100*time.Millisecond))
	}
	a := startOrderly(t, "og", "t", opts("a"),
		func(_ context.Context, msgs []*message.Ext, oc *consumer.OrderlyContext) consumer.OrderlyStatus {
			if msgs[0].QueueOffset == 0 {
				aStarted <- struct{}{}
				time.Sleep(5 * time.Second) // well past the lock expiry and the removal's wait
				mu.Lock()
				aDone[oc.Queue.QueueID] = true
				mu.Unlock()
			}
			return consumer.OrderlySuccess
		})
	produceToQueues(t, c, "t", 2, 1)
	<-aStarted
	<-aStarted
	type call struct {
		offset int64
		aDone  bool
	}
	bCalls := make(chan call, 4)
	b := startOrderly(t, "og", "t", opts("b"),
		func(_ context.Context, msgs []*message.Ext, oc *consumer.OrderlyContext) consumer.OrderlyStatus {
			mu.Lock()
			done := aDone[oc.Queue.QueueID]
			mu.Unlock()
			bCalls <- call{msgs[0].QueueOffset, done}
			return consumer.OrderlySuccess
		})
	produceToQueues(t, c, "t", 2, 1) // offset 1: what b has to consume
	var first call
	select {
	case first = <-bCalls:
	case <-time.After(20 * time.Second):
		t.Fatal("member b consumed nothing")
	}
	shutdown(t, b)
	shutdown(t, a)
	require.True(t, first.aDone, "member b consumed a queue while member a's call on it was still running")
	require.Equal(t, int64(1), first.offset, "member b started before member a's result was persisted")
}

// A lost lock granted again after another client consumed the queue further makes
// regain forget the queue; the queue is created again from the broker's offset only
// once the listener call still running on the forgotten one ended: no two calls on one
// queue at once, and none on the stale messages the other client consumed.
func TestOrderlyForgottenQueueWaitsForRunningCall(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1))
	b := c.Brokers()[0]
	q := message.Queue{Topic: "t", BrokerName: b.Name(), QueueID: 0}
	log := &logtest.Lines{Min: logging.LevelWarn}
	var inflight, maxInflight atomic.Int64
	var mu sync.Mutex
	var after []int64 // offsets consumed after the slow one
	inSlow := make(chan struct{}, 1)
	pc := startOrderly(t, "og", "t", fastOptions(c, consumer.WithLockRenewInterval(100*time.Millisecond), consumer.WithLogger(log)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.OrderlyContext) consumer.OrderlyStatus {
			n := inflight.Add(1)
			defer inflight.Add(-1)
			for m := maxInflight.Load(); n > m && !maxInflight.CompareAndSwap(m, n); m = maxInflight.Load() {
			}
			if msgs[0].QueueOffset == 0 {
				inSlow <- struct{}{}
				time.Sleep(3 * time.Second)
				return consumer.OrderlySuccess
			}
			mu.Lock()
			for _, m := range msgs {
				after = append(after, m.QueueOffset)
			}
			mu.Unlock()
			return consumer.OrderlySuccess
		})
	_, err := b.Produce("t", 0, &message.Message{Topic: "t", Body: []byte("slow")})
	require.NoError(t, err)
	<-inSlow
	// While the slow call runs, the lock goes to a thief, which consumes up to offset 3
	// and leaves; the next renewal gets the lock back.
	b.GiveLock("og", q, "thief")
	require.Eventually(t, func() bool { return log.Count("lost the broker lock") > 0 },
		10*time.Second, 10*time.Millisecond)
	produceToQueues(t, c, "t", 1, 5)
	b.SetCommittedOffset("og", "t", 0, 3)
	newLocker(t, b.Addr(), "og", "thief").unlock(t, q)
	consumed := func() []int64 {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(after)
	}
	require.Eventually(t, func() bool { return len(consumed()) >= 3 }, 20*time.Second, 10*time.Millisecond)
	shutdown(t, pc)
	require.Equal(t, int64(1), maxInflight.Load(), "two listener calls on one queue at once")
	require.Equal(t, []int64{3, 4, 5}, consumed(), "consumed from the broker's offset after the slow call")
}
