package integration

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// TestCommitIntervalOutlivesCommitCarryingPull: a consumed offset reaches the broker
// within the commit interval even when the commit finds the queue's commit-carrying pull
// in flight (the broker answers each pull 100 ms late) and has to skip it: the end of
// that pull asks for the commit again. Here that pull brings nothing for the listener,
// only a message filtered out by the broker (another tag) or by the client, so no later
// listener call re-arms the commit, and the pull after it carries no offset. The persist
// round (30 s) is out of reach: only the commit can write the offset in time.
func TestCommitIntervalOutlivesCommitCarryingPull(t *testing.T) {
	for _, tail := range []string{"unmatched-tag", "client-filtered"} {
		t.Run(tail, func(t *testing.T) {
			c := newCluster(t, fakebroker.WithTopic("t10", 1), fakebroker.WithPullServiceTime(100*time.Millisecond))
			produce(t, c, "t10", "pre", 1, "A") // offset 0, already consumed by the group
			b := c.Brokers()[0]
			b.SetCommittedOffset("g10", "t10", 0, 1)
			want := produce(t, c, "t10", "a", 32, "A") // offsets 1..32
			if tail == "unmatched-tag" {
				produce(t, c, "t10", "b", 1, "B") // offset 33: the broker filters it out
			} else {
				produce(t, c, "t10", "skip", 1, "A") // offset 33: the client filters it out
			}
			skip := consumer.MessageFilterFunc(func(_ message.Queue, m *message.Ext) bool {
				return !strings.HasPrefix(string(m.Body), "skip")
			})
			got := newTally()
			pc := startConsumer(t, "g10", "t10", consumer.Tags("A"),
				fastOptions(c, consumer.WithPersistConsumerOffsetInterval(30*time.Second), consumer.WithMessageFilter(skip)),
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
