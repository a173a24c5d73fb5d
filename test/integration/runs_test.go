package integration

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// Quick listener calls of one message each are made in runs (a worker takes up to 32
// of a queue's calls at once and does the cache and offset bookkeeping once for them);
// the result rules stay per call: a failed call's message, or one whose AckIndex left
// it out, goes back through the retry topic and comes back once, every other one is
// consumed once, and each queue's offset reaches its end.
func TestRunsOfQuickCallsKeepTheResultRules(t *testing.T) {
	const n = 3000
	c := newCluster(t, fakebroker.WithTopic("t", 2), fastDelays())
	want := produce(t, c, "t", "m", n, "")
	first, again := newTally(), newTally()
	failed := func(m *message.Ext) (bool, bool) { // ReconsumeLater, AckIndex -1
		i, err := strconv.Atoi(strings.TrimPrefix(string(m.Body), "m-"))
		require.NoError(t, err)
		return i%10 == 3, i%10 == 7
	}
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c),
		func(_ context.Context, msgs []*message.Ext, cc *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			require.Len(t, msgs, 1)
			if msgs[0].ReconsumeTimes > 0 {
				again.add(msgs)
				return consumer.ConsumeSuccess
			}
			first.add(msgs)
			later, none := failed(msgs[0])
			if none {
				cc.AckIndex = -1
			}
			if later {
				return consumer.ReconsumeLater
			}
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	var back []string
	for _, w := range want {
		if later, none := failed(&message.Ext{Message: message.Message{Body: []byte(w)}}); later || none {
			back = append(back, w)
		}
	}
	waitFor(t, 60*time.Second, "the retried messages", func() bool { return again.distinct() == len(back) })
	missing, dups := first.check(want)
	require.Zero(t, missing)
	require.Zero(t, dups)
	missing, dups = again.check(back)
	require.Zero(t, missing, "every failed message came back")
	require.Zero(t, dups)
	require.Equal(t, len(back), again.distinct(), "and only those")
	waitOffsetsAtEnd(t, c.Brokers()[0], "g", "t", 2)
}

// A call that hangs past the consume timeout in the middle of quick calls gets its own
// message sent back, and nothing else: not the messages of the calls before it (already
// consumed) nor those after it (not yet given to the listener; other workers take them).
func TestRunsOfQuickCallsAroundAHungCall(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1), fastDelays())
	b := c.Brokers()[0]
	want := produce(t, c, "t", "m", 2000, "")
	hung := want[1500]
	released := make(chan struct{})
	seen := newTally()
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithConsumeTimeout(time.Second)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			if seen.addOne(msgs[0]) == 1 && string(msgs[0].Body) == hung {
				time.Sleep(2500 * time.Millisecond) // past the timeout: the sweeper sends it back
				close(released)
			}
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 30*time.Second, "every message, and the hung one back from the retry topic", func() bool {
		return seen.distinct() == len(want) && seen.count(hung) == 2
	})
	<-released
	waitOffsetsAtEnd(t, b, "g", "t", 1)
	seen.requireOnceBut(t, hung)
	require.Equal(t, 1, b.Requests(protocol.RequestConsumerSendMsgBack), "only the hung message is sent back")
}

// A call whose message goes back through a slow send-back ends its run: the next call
// gets a consume-start stamp of its own, not the previous call's end, so a call shorter
// than the consume timeout is not sent back too (one worker, so the same worker makes
// both calls; each send-back takes 1.5 s, past the 1 s timeout).
func TestRunsOfQuickCallsAfterASlowSendBack(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1), fastDelays(),
		fakebroker.WithLag(fakebroker.Lag{Code: protocol.RequestConsumerSendMsgBack, Min: 1500 * time.Millisecond, Max: 1500 * time.Millisecond}))
	b := c.Brokers()[0]
	want := produce(t, c, "t", "m", 2000, "")
	failed, slow := want[1000], want[1001]
	seen := newTally()
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithConsumeTimeout(time.Second), consumer.WithConsumeGoroutineNums(1)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			if seen.addOne(msgs[0]) == 1 {
				switch string(msgs[0].Body) {
				case failed:
					return consumer.ReconsumeLater
				case slow:
					time.Sleep(700 * time.Millisecond) // within the timeout, counted from its own start
				}
			}
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 30*time.Second, "every message, and the failed one again", func() bool {
		return seen.distinct() == len(want) && seen.count(failed) == 2
	})
	waitOffsetsAtEnd(t, b, "g", "t", 1)
	seen.requireOnceBut(t, failed)
	require.Equal(t, 1, b.Requests(protocol.RequestConsumerSendMsgBack), "only the failed message is sent back")
}

// waitOffsetsAtEnd waits until group's committed offset of each of topic's first queues
// is the queue's max offset.
func waitOffsetsAtEnd(t *testing.T, b *fakebroker.Broker, group, topic string, queues int) {
	t.Helper()
	waitFor(t, 10*time.Second, "offsets at the end", func() bool {
		for q := range queues {
			if off, _ := b.CommittedOffset(group, topic, q); off != b.MaxOffset(topic, q) {
				return false
			}
		}
		return true
	})
}
