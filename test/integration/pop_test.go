package integration

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// popCluster starts a fake 5.x cluster with topic (queues queues) whose group consumes
// it by POP, every member popping every queue.
func popCluster(t *testing.T, group, topic string, queues int, opts ...fakebroker.Opt) *fakebroker.Cluster {
	t.Helper()
	c := newCluster(t, append([]fakebroker.Opt{fakebroker.WithRocketMQ5(true), fakebroker.WithTopic(topic, queues)}, opts...)...)
	require.NoError(t, c.SetConsumeMode(group, topic, "POP", 0))
	return c
}

// popOptions are fastOptions for a POP consumer.
func popOptions(c *fakebroker.Cluster, extra ...consumer.Option) []consumer.Option {
	return fastOptions(c, append([]consumer.Option{
		consumer.WithClientRebalance(false),
		consumer.WithLongPollTime(200 * time.Millisecond),
	}, extra...)...)
}

// One POP consumer gets every message, acks them all, and shuts down with nothing in
// flight on the broker.
func TestPopConsumesAndAcks(t *testing.T) {
	c := popCluster(t, "pop-g", "pop-t", 4)
	want := produce(t, c, "pop-t", "m", 2000, "")
	got := newTally()
	pc := startConsumer(t, "pop-g", "pop-t", consumer.All(), popOptions(c),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			for _, m := range msgs {
				require.Equal(t, "pop-t", m.Topic)
				require.NotEmpty(t, m.Property("POP_CK"))
			}
			got.add(msgs)
			return consumer.ConsumeSuccess
		})
	waitFor(t, 20*time.Second, "every message", func() bool { return got.distinct() == len(want) })
	b := c.Brokers()[0]
	waitFor(t, 5*time.Second, "every ack", func() bool { return len(b.InflightPops("pop-g")) == 0 },
		func() string { return formatInflight(b.InflightPops("pop-g")) })
	waitAcksCounted(t, pc, len(want))
	st := pc.Stats()
	require.Equal(t, int64(len(want)), st.Pop.Popped)
	require.Equal(t, int64(len(want)), st.Pop.Acked)
	require.Positive(t, st.Pop.Requests.BatchAcks, "acks go in batches")
	require.Contains(t, st.Queues, message.Queue{Topic: "pop-t", BrokerName: "broker-a", QueueID: -1}, "the topic as one queue -1")
	waitFor(t, 5*time.Second, "the retry topic pulled", func() bool { return len(pc.Stats().Queues) == 2 })
	shutdown(t, pc)
	missing, dups := got.check(want)
	require.Zero(t, missing)
	require.Zero(t, dups)
	for q := range 4 {
		off, _ := b.CommittedOffset("pop-g", "pop-t", q)
		require.Equal(t, int64(len(want)/4), off, "queue %d: the checkpoints moved the offset", q)
	}
}

// Eight members on a four-queue topic, every member popping every queue: all eight
// consume, nothing is lost, and a message comes twice only when its invisible time
// ended before its ack: the broker revived it (none, with the default 60 s).
func TestPopEightMembersFourQueues(t *testing.T) {
	c := popCluster(t, "pop8-g", "pop8-t", 4)
	want := produce(t, c, "pop8-t", "m", 20000, "")
	got := newTally()
	var members []*consumer.PushConsumer
	perMember := make([]atomic.Int64, 8)
	for i := range 8 {
		members = append(members, startConsumer(t, "pop8-g", "pop8-t", consumer.All(),
			popOptions(c, consumer.WithInstanceName(fmt.Sprint("m", i)), consumer.WithConsumeGoroutineNums(4)),
			func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
				perMember[i].Add(int64(len(msgs)))
				got.add(msgs)
				time.Sleep(100 * time.Microsecond) // a listener that takes some time, so no member takes everything
				return consumer.ConsumeSuccess
			}))
	}
	waitFor(t, 60*time.Second, "every message", func() bool { return got.distinct() == len(want) },
		func() string { return fmt.Sprint("distinct ", got.distinct()) })
	b := c.Brokers()[0]
	waitFor(t, 10*time.Second, "every ack", func() bool { return len(b.InflightPops("pop8-g")) == 0 },
		func() string { return formatInflight(b.InflightPops("pop8-g")) })
	for _, pc := range members {
		shutdown(t, pc)
	}
	missing, dups := got.check(want)
	revived := len(b.PopRetryMessages("pop8-g", "pop8-t"))
	var late int64
	for _, pc := range members {
		late += pc.Stats().Pop.LateAcks
	}
	t.Logf("8 POP members, 4 queues, %d messages: %d lost, %d duplicates, %d revived by the broker, %d late acks; per member %v",
		len(want), missing, dups, revived, late, counts(perMember))
	require.Zero(t, missing)
	require.LessOrEqual(t, dups, revived, "a duplicate only when the broker revived the message")
	for i := range perMember {
		require.Positive(t, perMember[i].Load(), "member %d consumed nothing", i)
	}
}

// Faults on the POP requests (fakebroker faults): acks dropped for 1.5 s, pops delayed, then
// a broker refusing BATCH_ACK_MESSAGE. Nothing is lost; a message comes twice only when
// a dropped ack let its invisible time end, and then it comes back from the POP retry
// topic (ReconsumeTimes 1); after the refusal the acks go one ACK_MESSAGE each.
func TestPopUnderFaults(t *testing.T) {
	c := popCluster(t, "popf-g", "popf-t", 4)
	b := c.Brokers()[0]
	_, err := b.Inject(fakebroker.Fault{Code: protocol.RequestBatchAckMessage, Drop: true, For: 1500 * time.Millisecond})
	require.NoError(t, err)
	_, err = b.Inject(fakebroker.Fault{Code: protocol.RequestPopMessage, Delay: 200 * time.Millisecond, Times: 10})
	require.NoError(t, err)
	got := newTally()
	var mu sync.Mutex
	reconsumed := map[string]int32{} // body: the highest ReconsumeTimes delivered
	pc := startConsumer(t, "popf-g", "popf-t", consumer.All(),
		popOptions(c, consumer.WithPopInvisibleTime(time.Second), consumer.WithRequestTimeout(300*time.Millisecond)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			got.add(msgs)
			mu.Lock()
			for _, m := range msgs {
				reconsumed[string(m.Body)] = max(reconsumed[string(m.Body)], m.ReconsumeTimes)
			}
			mu.Unlock()
			return consumer.ConsumeSuccess
		})
	want := produce(t, c, "popf-t", "a", 400, "")
	waitFor(t, 20*time.Second, "every message", func() bool { return got.distinct() == len(want) })
	waitFor(t, 10*time.Second, "every ack", func() bool { return len(b.InflightPops("popf-g")) == 0 },
		func() string { return formatInflight(b.InflightPops("popf-g")) })

	_, err = b.Inject(fakebroker.Fault{Code: protocol.RequestBatchAckMessage, Fail: protocol.ResponseRequestCodeNotSupported})
	require.NoError(t, err)
	more := produce(t, c, "popf-t", "b", 400, "")
	want = append(want, more...)
	waitFor(t, 20*time.Second, "every message", func() bool { return got.distinct() == len(want) })
	waitFor(t, 10*time.Second, "every ack", func() bool { return len(b.InflightPops("popf-g")) == 0 },
		func() string { return formatInflight(b.InflightPops("popf-g")) })
	st := pc.Stats().Pop
	shutdown(t, pc)

	missing, dups := got.check(want)
	got.mu.Lock()
	twice := 0
	for body, n := range got.counts {
		if n > 1 {
			twice++
			require.Positive(t, reconsumed[body], "%s came %d times, never from the retry topic", body, n)
		}
	}
	got.mu.Unlock()
	t.Logf("POP under faults, %d messages: %d lost, %d duplicates (%d messages, each back from the retry topic), acks failed %d, late %d; %d BATCH_ACK and %d ACK requests",
		len(want), missing, dups, twice, st.AckFailed, st.LateAcks, st.Requests.BatchAcks, st.Requests.Acks)
	require.Zero(t, missing)
	require.Positive(t, st.AckFailed, "the dropped acks failed")
	require.LessOrEqual(t, int64(dups), st.AckFailed, "a duplicate only for an ack that failed")
	require.Positive(t, st.Requests.Acks, "single acks after BATCH_ACK was refused")
}

func counts(v []atomic.Int64) []int64 {
	out := make([]int64, len(v))
	for i := range v {
		out[i] = v[i].Load()
	}
	return out
}

// With more members than queues and each popping only its own (popShareQueueNum 1),
// members pop single queues, and several members share each queue.
func TestPopSpecificQueues(t *testing.T) {
	c := newCluster(t, fakebroker.WithRocketMQ5(true), fakebroker.WithTopic("popq-t", 2))
	require.NoError(t, c.SetConsumeMode("popq-g", "popq-t", "POP", 1))
	want := produce(t, c, "popq-t", "m", 400, "")
	got := newTally()
	var members []*consumer.PushConsumer
	for i := range 3 {
		members = append(members, startConsumer(t, "popq-g", "popq-t", consumer.All(),
			popOptions(c, consumer.WithInstanceName(fmt.Sprint("q", i))),
			func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
				got.add(msgs)
				return consumer.ConsumeSuccess
			}))
	}
	waitFor(t, 20*time.Second, "every message", func() bool { return got.distinct() == len(want) })
	waitFor(t, 10*time.Second, "specific queues", func() bool {
		for _, pc := range members {
			for q := range pc.Stats().Queues {
				if q.Topic == "popq-t" && q.QueueID < 0 {
					return false
				}
			}
		}
		return true
	})
	for _, pc := range members {
		shutdown(t, pc)
	}
	missing, _ := got.check(want)
	require.Zero(t, missing)
}

// A listener that fails once: the message comes back, from the POP retry topic, with
// ReconsumeTimes 1, no sooner than its retry delay. One that always fails goes to the
// dead-letter queue after MaxReconsumeTimes, and is acked.
func TestPopRetryAndDeadLetter(t *testing.T) {
	c := popCluster(t, "popr-g", "popr-t", 2)
	const delay = 150 * time.Millisecond
	levels := make([]time.Duration, 16)
	for i := range levels {
		levels[i] = delay
	}
	type delivery struct {
		at    time.Time
		times int32
		topic string
	}
	var mu sync.Mutex
	seen := map[string][]delivery{}
	pc := startConsumer(t, "popr-g", "popr-t", consumer.All(), popOptions(c, consumer.WithPopDelayLevels(levels...)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			mu.Lock()
			defer mu.Unlock()
			m := msgs[0]
			seen[string(m.Body)] = append(seen[string(m.Body)], delivery{time.Now(), m.ReconsumeTimes, m.Topic})
			if string(m.Body) == "poison" || (string(m.Body) == "once" && m.ReconsumeTimes == 0) {
				return consumer.ReconsumeLater
			}
			return consumer.ConsumeSuccess
		})
	_, err := c.Produce("popr-t", &message.Message{Body: []byte("once")}, &message.Message{Body: []byte("poison")})
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "the poison message in the dead-letter queue", func() bool {
		return len(c.DLQMessages("popr-g")) == 1
	})
	b := c.Brokers()[0]
	waitFor(t, 5*time.Second, "every ack", func() bool { return len(b.InflightPops("popr-g")) == 0 })
	shutdown(t, pc)
	mu.Lock()
	defer mu.Unlock()
	once := seen["once"]
	require.Len(t, once, 2)
	require.Equal(t, int32(1), once[1].times)
	require.Equal(t, "popr-t", once[1].topic, "the topic popped for, not the retry topic")
	require.GreaterOrEqual(t, once[1].at.Sub(once[0].at), delay)
	poison := seen["poison"]
	require.Len(t, poison, 17, "the first delivery and 16 retries")
	for i, d := range poison {
		require.Equal(t, int32(i), d.times)
	}
	dlq := c.DLQMessages("popr-g")[0]
	require.Equal(t, "poison", string(dlq.Body))
	st := pc.Stats().Pop
	require.Equal(t, int64(1), st.DeadLettered)
	require.Equal(t, int64(17), st.Retried)
}

// A listener call longer than the invisible time: its message's invisible time is
// extended, so no other pop gets it; the ack, with the new handle, ends it.
func TestPopExtendsInvisibleTimeOfSlowListeners(t *testing.T) {
	c := popCluster(t, "pope-g", "pope-t", 1)
	got := newTally()
	pc := startConsumer(t, "pope-g", "pope-t", consumer.All(), popOptions(c, consumer.WithPopInvisibleTime(time.Second)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			got.add(msgs)
			time.Sleep(2500 * time.Millisecond)
			return consumer.ConsumeSuccess
		})
	want := produce(t, c, "pope-t", "slow", 3, "")
	b := c.Brokers()[0]
	waitFor(t, 20*time.Second, "every message", func() bool { return got.distinct() == len(want) })
	waitFor(t, 10*time.Second, "every ack", func() bool { return len(b.InflightPops("pope-g")) == 0 })
	time.Sleep(1500 * time.Millisecond) // longer than an invisible time: nothing comes back
	shutdown(t, pc)
	missing, dups := got.check(want)
	require.Zero(t, missing)
	require.Zero(t, dups)
	require.Empty(t, b.PopRetryMessages("pope-g", "pope-t"))
	st := pc.Stats().Pop
	require.Positive(t, st.Extended)
	require.Zero(t, st.ExtendFailed)
	require.Zero(t, st.LateAcks)
}

// Against a 4.x broker, which does not assign queues, WithClientRebalance(false) falls
// back to client rebalancing and pulls.
func TestClientRebalanceFalseOn4xBroker(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("pop4-t", 2))
	want := produce(t, c, "pop4-t", "m", 100, "")
	got := newTally()
	pc := startConsumer(t, "pop4-g", "pop4-t", consumer.All(), popOptions(c),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			got.add(msgs)
			return consumer.ConsumeSuccess
		})
	waitFor(t, 20*time.Second, "every message", func() bool { return got.distinct() == len(want) })
	shutdown(t, pc)
	require.Zero(t, pc.Stats().Pop.Popped)
}

// count returns how often body was delivered.
func (t *tally) count(body string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.counts[body]
}

func formatInflight(m map[message.Queue]int) string {
	s := "in flight:"
	for q, n := range m {
		s += " " + q.String() + "=" + itoa(n)
	}
	return s
}

func itoa(n int) string { return fmt.Sprint(n) }

// countingHooks counts what the hooks of a POP consumer see.
type countingHooks struct {
	pulls, found, calls, sendBacks atomic.Int64
	popQueue                       atomic.Bool
}

func (h *countingHooks) OnPull(e consumer.PullEvent) {
	h.pulls.Add(1)
	h.found.Add(int64(e.Found))
	if e.Queue.QueueID == -1 {
		h.popQueue.Store(true)
	}
}
func (h *countingHooks) OnConsumeEnd(_ context.Context, call *consumer.ConsumeCall) { h.calls.Add(1) }
func (h *countingHooks) OnSendBack(e consumer.SendBackEvent) {
	if e.DeadLetter {
		h.sendBacks.Add(1)
	}
}

// Pops are reported to the pull hooks, listener calls to the consume hooks, dead
// letters to the send-back hooks; admin tools see the POP queues in mqPopTable.
func TestPopHooksAndRunningInfo(t *testing.T) {
	c := popCluster(t, "poph-g", "poph-t", 2)
	hooks := &countingHooks{}
	got := newTally()
	pc := startConsumer(t, "poph-g", "poph-t", consumer.All(),
		popOptions(c, consumer.WithHooks(hooks), consumer.WithMaxReconsumeTimes(0), consumer.WithPopDelayLevels(20*time.Millisecond)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			got.add(msgs)
			if string(msgs[0].Body) == "m-0" {
				return consumer.ReconsumeLater // MaxReconsumeTimes 0: straight to the dead-letter queue
			}
			return consumer.ConsumeSuccess
		})
	want := produce(t, c, "poph-t", "m", 50, "")
	waitFor(t, 20*time.Second, "every message", func() bool { return got.distinct() == len(want) })
	waitFor(t, 10*time.Second, "the dead letter", func() bool { return len(c.DLQMessages("poph-g")) == 1 })
	require.Equal(t, int64(50), hooks.found.Load())
	require.True(t, hooks.popQueue.Load())
	require.Equal(t, int64(50), hooks.calls.Load())
	require.Equal(t, int64(1), hooks.sendBacks.Load())

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := c.Brokers()[0].ConsumerRunningInfo(ctx, "poph-g", pc.ClientID(), false)
	require.NoError(t, err)
	require.Contains(t, info.MQPopTable, message.Queue{Topic: "poph-t", BrokerName: "broker-a", QueueID: -1})
	require.Equal(t, "false", info.Properties["clientRebalance"])
	shutdown(t, pc)
}

// The operator sets the group back to PULL while a message waits in the POP retry
// topic: the consumer pulls the topic's queues and the POP retry topic, where the
// message comes back with its topic restored.
func TestPopBackToPull(t *testing.T) {
	c := popCluster(t, "popb-g", "popb-t", 2)
	type delivery struct {
		topic string
		times int32
	}
	var mu sync.Mutex
	var seen []delivery
	pc := startConsumer(t, "popb-g", "popb-t", consumer.All(), popOptions(c, consumer.WithPopDelayLevels(time.Second)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, delivery{msgs[0].Topic, msgs[0].ReconsumeTimes})
			if msgs[0].ReconsumeTimes == 0 {
				return consumer.ReconsumeLater
			}
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	_, err := c.Produce("popb-t", &message.Message{Body: []byte("x")})
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the first delivery", func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) == 1 })
	require.NoError(t, c.SetConsumeMode("popb-g", "popb-t", "PULL", 0))
	waitFor(t, 20*time.Second, "the retry pulled from the POP retry topic", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 2
	})
	mu.Lock()
	require.Equal(t, delivery{"popb-t", 1}, seen[1])
	mu.Unlock()
	waitFor(t, 5*time.Second, "the topic pulled", func() bool {
		for q := range pc.Stats().Queues {
			if q.Topic == "popb-t" && q.QueueID >= 0 {
				return true
			}
		}
		return false
	})
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 2)
}

// A group whose committed offsets fell below the queues' min offsets (retention removed
// the messages) consumes by POP what is left, every ack lands, and nothing comes twice.
// The broker names the stale offset as each pop's start (5.3.3's popMsgFromQueue after
// OFFSET_TOO_SMALL): on queue 0 the handles of the first pop lie 5000 above it, too far
// for a batched ack's bit set, and go one ACK_MESSAGE each; the rest go in batches.
func TestPopCommittedOffsetBelowMinOffset(t *testing.T) {
	c := popCluster(t, "popmin-g", "popmin-t", 2)
	b := c.Brokers()[0]
	var want []string
	for q, n := range []int{5100, 60} {
		var msgs []*message.Message
		for i := range n {
			msgs = append(msgs, &message.Message{Body: []byte(fmt.Sprintf("q%d-%d", q, i))})
		}
		_, err := b.Produce("popmin-t", q, msgs...)
		require.NoError(t, err)
		b.SetCommittedOffset("popmin-g", "popmin-t", q, 0)
		first := int64(n - 50 - 50*(1-q)) // queue 0: 5000, queue 1: 10
		require.NoError(t, b.TruncateQueue("popmin-t", q, first))
		for i := first; i < int64(n); i++ {
			want = append(want, fmt.Sprintf("q%d-%d", q, i))
		}
	}
	got := newTally()
	pc := startConsumer(t, "popmin-g", "popmin-t", consumer.All(), popOptions(c),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			got.add(msgs)
			return consumer.ConsumeSuccess
		})
	waitFor(t, 20*time.Second, "every message", func() bool { return got.distinct() == len(want) })
	waitFor(t, 5*time.Second, "every ack", func() bool { return len(b.InflightPops("popmin-g")) == 0 },
		func() string { return formatInflight(b.InflightPops("popmin-g")) })
	waitAcksCounted(t, pc, len(want))
	st := pc.Stats()
	shutdown(t, pc)
	missing, dups := got.check(want)
	require.Zero(t, missing)
	require.Zero(t, dups)
	require.Zero(t, st.Pop.AckFailed)
	require.Equal(t, int64(len(want)), st.Pop.Acked)
	require.Positive(t, st.Pop.Requests.Acks, "the acks of queue 0's first pop go one by one")
	require.Positive(t, st.Pop.Requests.BatchAcks, "queue 1's acks go in batches")
	require.Empty(t, b.PopRetryMessages("popmin-g", "popmin-t"), "nothing revived")
	for q, n := range []int64{5100, 60} {
		off, _ := b.CommittedOffset("popmin-g", "popmin-t", q)
		require.Equal(t, n, off, "queue %d", q)
	}
}

// POP's stats count a ConsumeSuccess call with the AckIndex clamped to the batch, as the
// pulled path's do (TestStatsClampAckIndex): math.MaxInt overflowed, and a value below -1
// made the counts negative.
func TestPopStatsClampAckIndex(t *testing.T) {
	for _, ack := range []int{math.MaxInt, -3} {
		t.Run("", func(t *testing.T) {
			c := popCluster(t, "pop-g", "pop-t", 1)
			produce(t, c, "pop-t", "m", 1, "")
			requireClampedStats(t, ack, "pop-t", func(fn listenerFunc) *consumer.PushConsumer {
				return startConsumer(t, "pop-g", "pop-t", consumer.All(), popOptions(c), fn)
			})
		})
	}
}

// waitAcksCounted waits until the consumer counted n acks: the broker drops a pop from
// its inflight table before it answers the ack, and the consumer counts the ack when the
// answer arrives.
func waitAcksCounted(t *testing.T, pc *consumer.PushConsumer, n int) {
	t.Helper()
	waitFor(t, 5*time.Second, "every ack counted", func() bool { return pc.Stats().Pop.Acked >= int64(n) })
}
