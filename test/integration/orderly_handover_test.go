package integration

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
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
