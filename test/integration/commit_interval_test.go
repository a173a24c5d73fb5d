package integration

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// TestCommitIntervalOutlivesCommitCarryingPull: a consumed offset reaches the broker
// within the commit interval even when the commit finds the queue's commit-carrying pull
// in flight (the broker answers each pull 100 ms late, so it often does) and has to skip
// it: the end of that pull asks for the commit again. The pull after it carries no
// offset (nothing more to read), and with "unmatched-tail" the last move comes from a
// pull that found only a message of another tag. The persist round (30 s) is out of
// reach: only the commit can have written the offset.
func TestCommitIntervalOutlivesCommitCarryingPull(t *testing.T) {
	for _, tail := range []bool{false, true} {
		name := "no-tail"
		if tail {
			name = "unmatched-tail"
		}
		t.Run(name, func(t *testing.T) {
			c := newCluster(t, fakebroker.WithTopic("t10", 1), fakebroker.WithPullServiceTime(100*time.Millisecond))
			produce(t, c, "t10", "pre", 1, "A") // offset 0, already consumed by the group
			b := c.Brokers()[0]
			b.SetCommittedOffset("g10", "t10", 0, 1)
			want := produce(t, c, "t10", "a", 32, "A") // offsets 1..32
			if tail {
				produce(t, c, "t10", "b", 1, "B") // offset 33, not subscribed
			}
			got := newTally()
			pc := startConsumer(t, "g10", "t10", consumer.Tags("A"),
				fastOptions(c, consumer.WithPersistConsumerOffsetInterval(30*time.Second)),
				func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
					got.add(msgs)
					return consumer.ConsumeSuccess
				})
			defer shutdown(t, pc)
			waitFor(t, 10*time.Second, "32 messages", func() bool { return got.distinct() == len(want) })
			// A generous bound: the commit interval is 10 ms.
			waitFor(t, 5*time.Second, "the broker to hold the offset after the last message", func() bool {
				off, _ := b.CommittedOffset("g10", "t10", 0)
				return off >= 33
			}, func() string {
				off, _ := b.CommittedOffset("g10", "t10", 0)
				return "the broker holds " + strconv.FormatInt(off, 10)
			})
		})
	}
}
