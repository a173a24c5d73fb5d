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

// Shutdown called from inside a listener call waits for that very call until its
// context ends (Shutdown's doc says so): with a deadline it then returns the context's
// error, the call goes on, and nothing is left running once the call returns (goleak).
func TestShutdownFromInsideListenerWaitsUntilItsContextEnds(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1))
	produce(t, c, "t", "m", 10, "")
	const deadline = 300 * time.Millisecond
	var (
		calls    atomic.Int64
		took     atomic.Int64
		returned = make(chan error, 1)
		pc       *consumer.PushConsumer
		ready    = make(chan struct{})
	)
	pc = startConsumer(t, "g", "t", consumer.All(), fastOptions(c),
		func(context.Context, []*message.Ext, *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			if calls.Add(1) != 1 {
				return consumer.ConsumeSuccess
			}
			<-ready
			begin := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			err := pc.Shutdown(ctx)
			took.Store(int64(time.Since(begin)))
			returned <- err
			return consumer.ConsumeSuccess
		})
	close(ready)
	select {
	case err := <-returned:
		require.ErrorIs(t, err, context.DeadlineExceeded, "the call it runs in was still running")
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown inside the listener did not return after its context ended")
	}
	require.GreaterOrEqual(t, time.Duration(took.Load()), deadline, "it waited for the call it runs in")
}
