package integration

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// TestOffsetsNeverMoveBackOnAReorderingBroker runs a consumer against brokers that, like
// 4.9.8's thread pools, may process a pull's commit offset and an UPDATE_CONSUMER_OFFSET
// in the other order than they were sent. Whatever the broker does, the consumer must
// never send an offset that could land after a newer one of the same queue: no write
// may move a stored offset back (4.9.8 logs each as "[NOTIFYME]update consumer offset
// less than store"), and each is a window in which a handover or crash re-delivers.
func TestOffsetsNeverMoveBackOnAReorderingBroker(t *testing.T) {
	c := newCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic("orders", 4),
		fakebroker.WithOutOfOrderOffsets(3*time.Millisecond))
	want := produce(t, c, "orders", "backlog", 6000, "")
	got := newTally()
	pc := startConsumer(t, "g-order", "orders", consumer.All(), fastOptions(c),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			if rand.N(50) == 0 {
				time.Sleep(time.Duration(rand.N(2000)) * time.Microsecond)
			}
			got.add(msgs)
			return consumer.ConsumeSuccess
		})
	// Then bursts with pauses between them: queues drain, pulls are held and woken, and
	// offsets move both by pulls and by writes of their own.
	for burst := range 10 {
		time.Sleep(time.Duration(20+rand.N(60)) * time.Millisecond)
		want = append(want, produce(t, c, "orders", "burst"+string(rune('a'+burst)), 300, "")...)
	}
	waitFor(t, 30*time.Second, "every message", func() bool { return got.distinct() == len(want) })
	time.Sleep(100 * time.Millisecond) // the last offsets reach the brokers
	shutdown(t, pc)
	missing, _ := got.check(want)
	require.Zero(t, missing)
	for _, b := range c.Brokers() {
		n, recent := b.OffsetRegressions("g-order")
		require.Zero(t, n, "%s: offset writes that moved a stored offset back; the last ones: %+v", b.Name(), recent)
		committed := b.CommittedOffsets("g-order")
		for q := 0; q < 4; q++ {
			require.Equal(t, b.MaxOffset("orders", q), committed[message.Queue{Topic: "orders", BrokerName: b.Name(), QueueID: int32(q)}], "%s queue %d", b.Name(), q)
		}
	}
}
