package integration

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// orderLog records every delivery, in the order the listeners saw them, per queue.
type orderLog struct {
	mu     sync.Mutex
	events map[message.Queue][]delivery
}

type delivery struct {
	member string
	offset int64
}

func newOrderLog() *orderLog { return &orderLog{events: map[message.Queue][]delivery{}} }

func (l *orderLog) add(member string, q message.Queue, msgs []*message.Ext) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range msgs {
		l.events[q] = append(l.events[q], delivery{member, m.QueueOffset})
	}
}

// check verifies per queue: a member consumes consecutive offsets; a message is
// delivered again only when the queue changed hands; nothing is skipped. It returns the
// number of redeliveries.
func (l *orderLog) check(t *testing.T, maxOffset func(q message.Queue) int64) int {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	redelivered := 0
	for q, evs := range l.events {
		next := int64(0)
		for i, e := range evs {
			if i > 0 && e.member == evs[i-1].member {
				require.Equal(t, evs[i-1].offset+1, e.offset, "%s: %s consumed out of order", q, e.member)
			} else if e.offset < next {
				redelivered += int(next - e.offset)
			}
			require.LessOrEqual(t, e.offset, next, "%s: offset %d skipped", q, next)
			next = max(next, e.offset+1)
		}
		require.Equal(t, maxOffset(q), next, "%s: every message consumed", q)
	}
	return redelivered
}

func startOrderly(t *testing.T, group, topic string, opts []consumer.Option,
	fn func(context.Context, []*message.Ext, *consumer.OrderlyContext) consumer.OrderlyStatus) *consumer.PushConsumer {
	t.Helper()
	pc, err := consumer.NewPushConsumer(group, opts...)
	require.NoError(t, err)
	require.NoError(t, pc.Subscribe(topic, consumer.All()))
	require.NoError(t, pc.RegisterListener(consumer.OrderlyFunc(fn)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, pc.Start(ctx))
	return pc
}

// produceToQueues puts n messages in each queue of topic on every broker.
func produceToQueues(t *testing.T, c *fakebroker.Cluster, topic string, queues, n int) {
	t.Helper()
	for _, b := range c.Brokers() {
		for q := range queues {
			msgs := make([]*message.Message, n)
			for i := range msgs {
				msgs[i] = &message.Message{Topic: topic, Body: []byte(fmt.Sprintf("%s/%d/%d", b.Name(), q, i))}
			}
			_, err := b.Produce(topic, q, msgs...)
			require.NoError(t, err)
		}
	}
}

func TestOrderlyChurnKeepsEachQueueInOrder(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 8))
	produceToQueues(t, c, "t", 8, 500)
	log := newOrderLog()
	var total atomic.Int64
	listener := func(name string) func(context.Context, []*message.Ext, *consumer.OrderlyContext) consumer.OrderlyStatus {
		return func(_ context.Context, msgs []*message.Ext, oc *consumer.OrderlyContext) consumer.OrderlyStatus {
			log.add(name, oc.Queue, msgs)
			total.Add(int64(len(msgs)))
			time.Sleep(time.Millisecond)
			return consumer.OrderlySuccess
		}
	}
	opts := func(name string) []consumer.Option {
		return fastOptions(c, consumer.WithInstanceName(name), consumer.WithConsumeMessageBatchMaxSize(4))
	}
	members := map[string]*consumer.PushConsumer{}
	for _, name := range []string{"c0", "c1", "c2"} {
		members[name] = startOrderly(t, "og", "t", opts(name), listener(name))
	}
	b := c.Brokers()[0]
	waitFor(t, 10*time.Second, "locks held", func() bool { return len(locksOf(b, "og", "t")) == 8 })
	waitFor(t, 30*time.Second, "some progress", func() bool { return total.Load() > 1000 })
	shutdown(t, members["c0"])
	delete(members, "c0")
	waitFor(t, 30*time.Second, "more progress", func() bool { return total.Load() > 2500 })
	members["c3"] = startOrderly(t, "og", "t", opts("c3"), listener("c3"))
	waitFor(t, 60*time.Second, "every message", func() bool {
		for q := range 8 {
			if off, _ := b.CommittedOffset("og", "t", q); off < 500 {
				return false
			}
		}
		return true
	})
	for _, m := range members {
		shutdown(t, m)
	}
	redelivered := log.check(t, func(q message.Queue) int64 { return b.MaxOffset(q.Topic, int(q.QueueID)) })
	t.Logf("orderly: 4000 messages on 8 queues, 3 members, one leaving, one joining: %d consumed, %d redelivered, 0 out of order", total.Load(), redelivered)
	require.Empty(t, b.Locks("og"), "every lock released at shutdown")
}

// locksOf returns the locks of topic's queues in group.
func locksOf(b *fakebroker.Broker, group, topic string) map[message.Queue]string {
	out := map[message.Queue]string{}
	for q, id := range b.Locks(group) {
		if q.Topic == topic {
			out[q] = id
		}
	}
	return out
}

func TestOrderlySuspendBacksOffAndDeadLetters(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1), fastDelays())
	b := c.Brokers()[0]
	_, err := b.Produce("t", 0, &message.Message{Topic: "t", Body: []byte("poison")}, &message.Message{Topic: "t", Body: []byte("next")})
	require.NoError(t, err)
	var mu sync.Mutex
	var times []time.Time
	var after []string
	pc := startOrderly(t, "og", "t", fastOptions(c, consumer.WithMaxReconsumeTimes(3), consumer.WithSuspendCurrentQueueTime(50*time.Millisecond)),
		func(_ context.Context, msgs []*message.Ext, oc *consumer.OrderlyContext) consumer.OrderlyStatus {
			mu.Lock()
			defer mu.Unlock()
			if string(msgs[0].Body) == "poison" {
				times = append(times, time.Now())
				return consumer.SuspendCurrentQueueAMoment
			}
			after = append(after, string(msgs[0].Body))
			return consumer.OrderlySuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 10*time.Second, "the next message", func() bool { mu.Lock(); defer mu.Unlock(); return len(after) == 1 })
	mu.Lock()
	require.Len(t, times, 4, "1 delivery + 3 local retries, then the dead-letter queue")
	for i := 1; i < len(times); i++ {
		require.GreaterOrEqual(t, times[i].Sub(times[i-1]), 40*time.Millisecond, "each retry waits the suspend time")
	}
	mu.Unlock()
	waitFor(t, 5*time.Second, "the dead letter", func() bool { return len(c.DLQMessages("og")) == 1 })
	require.Equal(t, "poison", string(c.DLQMessages("og")[0].Body))
	require.Empty(t, c.RetryMessages("og"), "orderly retries are local, not through the retry topic")
	// The calls' statistics, gathered per task, are all recorded once the tasks end:
	// four failed calls on "poison", one good one on "next".
	waitFor(t, 5*time.Second, "the statistics", func() bool {
		ts := pc.Stats().Topics["t"]
		return ts.ConsumedMsgs == 1 && ts.ConsumeFailedMsgs == 4
	}, func() string { return fmt.Sprintf("%+v", pc.Stats().Topics["t"]) })
}

func TestOrderlyLostLockStopsConsumptionUntilRelocked(t *testing.T) {
	// The thief below renews its lock every 50 ms; a lock expiry far above that keeps a
	// stalled test goroutine on a loaded machine from letting our consumer retake it.
	const expiry = time.Second
	c := newCluster(t, fakebroker.WithTopic("t", 1), fakebroker.WithLockExpiry(expiry))
	b := c.Brokers()[0]
	q := message.Queue{Topic: "t", BrokerName: b.Name(), QueueID: 0}
	var consumed atomic.Int64
	pc := startOrderly(t, "og", "t", fastOptions(c, consumer.WithLockRenewInterval(100*time.Millisecond)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.OrderlyContext) consumer.OrderlyStatus {
			consumed.Add(int64(len(msgs)))
			return consumer.OrderlySuccess
		})
	produceToQueues(t, c, "t", 1, 10)
	waitFor(t, 10*time.Second, "first messages", func() bool { return consumed.Load() == 10 })

	// Our renewals fail for a while, so our lock expires on the broker, and another
	// client of the group takes it meanwhile: once the renewals work again the broker
	// refuses ours, and consumption stops. (The thief takes it through the fake broker:
	// its own lock request, sent after the fault ends, raced our first renewal.)
	fault, err := b.Inject(fakebroker.Fault{Code: protocol.RequestLockBatchMQ, Fail: protocol.ResponseSystemBusy})
	require.NoError(t, err)
	time.Sleep(expiry + 100*time.Millisecond) // our broker-side lock expires
	b.GiveLock("og", q, "thief")
	fault.Remove()
	thief := newLocker(t, b.Addr(), "og", "thief")
	require.True(t, thief.lock(t, q), "the thief holds the expired lock")
	produced := false
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		require.True(t, thief.lock(t, q), "the thief keeps its lock by renewing it")
		if !produced && time.Until(deadline) < 700*time.Millisecond {
			produceToQueues(t, c, "t", 1, 10)
			produced = true
		}
	}
	require.Equal(t, int64(10), consumed.Load(), "nothing consumed without the lock")

	// The thief leaves without consuming: we lock the queue again and resume where we
	// stopped.
	thief.unlock(t, q)
	waitFor(t, 10*time.Second, "consumption to resume", func() bool { return consumed.Load() == 20 })
	shutdown(t, pc)
	require.Empty(t, b.Locks("og"), "unlocked at shutdown")
	require.Positive(t, b.Requests(protocol.RequestUnlockBatchMQ))
}

// locker locks and unlocks queues as another client of a group.
type locker struct {
	rc       *remoting.Client
	addr     string
	group    string
	clientID string
}

func newLocker(t *testing.T, addr, group, clientID string) *locker {
	t.Helper()
	rc, err := remoting.NewClient()
	require.NoError(t, err)
	t.Cleanup(func() { _ = rc.Close() })
	return &locker{rc: rc, addr: addr, group: group, clientID: clientID}
}

func (l *locker) lock(t *testing.T, q message.Queue) bool {
	t.Helper()
	body := protocol.LockBatchRequest{ConsumerGroup: l.group, ClientID: l.clientID, MQSet: []message.Queue{q}}
	resp, err := l.rc.Invoke(context.Background(), l.addr, remoting.NewRequest(protocol.RequestLockBatchMQ, nil, body.Encode(protocol.StyleStandard)))
	require.NoError(t, err)
	var out protocol.LockBatchResponse
	require.NoError(t, out.Decode(resp.Body))
	return len(out.LockOKMQSet) == 1
}

func (l *locker) unlock(t *testing.T, q message.Queue) {
	t.Helper()
	body := protocol.UnlockBatchRequest{ConsumerGroup: l.group, ClientID: l.clientID, MQSet: []message.Queue{q}}
	_, err := l.rc.Invoke(context.Background(), l.addr, remoting.NewRequest(protocol.RequestUnlockBatchMQ, nil, body.Encode(protocol.StyleStandard)))
	require.NoError(t, err)
}

// Offset writes that hang on a slow broker must not hold back the consumer's timers:
// they run on their own goroutine. Here every UPDATE_CONSUMER_OFFSET takes 2 s; a
// queue suspended for 50 ms must still be consumed again long before that.
func TestSlowOffsetWritesDoNotDelaySuspendedQueues(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1))
	b := c.Brokers()[0]
	_, err := b.Produce("t", 0, &message.Message{Topic: "t", Body: []byte("first")}, &message.Message{Topic: "t", Body: []byte("second")})
	require.NoError(t, err)
	_, err = b.Inject(fakebroker.Fault{Code: fakebroker.RequestUpdateConsumerOffset, Delay: 2 * time.Second})
	require.NoError(t, err)
	var mu sync.Mutex
	var suspendedAt, resumedAt time.Time
	pc := startOrderly(t, "og", "t", fastOptions(c, consumer.WithSuspendCurrentQueueTime(50*time.Millisecond)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.OrderlyContext) consumer.OrderlyStatus {
			mu.Lock()
			defer mu.Unlock()
			if string(msgs[0].Body) != "second" {
				return consumer.OrderlySuccess // its offset is written 10 ms later, and hangs
			}
			if suspendedAt.IsZero() {
				suspendedAt = time.Now()
				return consumer.SuspendCurrentQueueAMoment
			}
			if resumedAt.IsZero() {
				resumedAt = time.Now()
			}
			return consumer.OrderlySuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 10*time.Second, "the suspended message again", func() bool { mu.Lock(); defer mu.Unlock(); return !resumedAt.IsZero() })
	mu.Lock()
	defer mu.Unlock()
	require.Less(t, resumedAt.Sub(suspendedAt), time.Second, "50 ms suspend, not the 2 s offset write")
}
