package integration

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strconv"
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

// lentBody is the body of message i: about 1 KiB of bytes that differ from every other
// message's, so that a body read from a buffer reused too soon shows as another's.
func lentBody(i int) []byte {
	b := fmt.Appendf(nil, "lent-%d-", i)
	for len(b) < 1000+i%50 {
		b = append(b, byte('a'+(i+len(b))%26))
	}
	return b
}

// produceLent produces messages from to to of topic with lentBody bodies, their index in
// property "i".
func produceLent(t *testing.T, c *fakebroker.Cluster, topic string, from, to int) {
	t.Helper()
	var msgs []*message.Message
	for i := from; i < to; i++ {
		m := &message.Message{Topic: topic, Body: lentBody(i)}
		m.Properties.Set("i", strconv.Itoa(i))
		msgs = append(msgs, m)
	}
	for len(msgs) > 0 {
		n := min(256, len(msgs))
		_, err := c.Produce(topic, msgs[:n]...)
		require.NoError(t, err)
		msgs = msgs[n:]
	}
}

// bodyChecker checks that every body a listener sees is its message's, when the call
// begins and again as it ends, after the goroutine let others run: a buffer lent to
// another answer while the call runs shows as a difference.
type bodyChecker struct {
	bad atomic.Int64
	msg atomic.Pointer[string] // the first difference
}

// check checks msgs, yielding in between; call it from the listener.
func (b *bodyChecker) check(msgs []*message.Ext) {
	b.checkNow(msgs)
	runtime.Gosched()
	time.Sleep(time.Duration(len(msgs)%3) * 50 * time.Microsecond)
	b.checkNow(msgs)
}

func (b *bodyChecker) checkNow(msgs []*message.Ext) {
	for _, m := range msgs {
		i, err := strconv.Atoi(m.Property("i"))
		if err == nil && bytes.Equal(m.Body, lentBody(i)) {
			continue
		}
		if b.bad.Add(1) == 1 {
			s := fmt.Sprintf("message %q at offset %d: body %.40q", m.Property("i"), m.QueueOffset, m.Body)
			b.msg.Store(&s)
		}
	}
}

func (b *bodyChecker) requireClean(t *testing.T) {
	t.Helper()
	if n := b.bad.Load(); n > 0 {
		t.Fatalf("%d bodies changed under their listener call; the first: %s", n, *b.msg.Load())
	}
}

// With WithLentBodies every body is intact for the length of its listener call, on the
// read loops and on the workers, through send-backs and redeliveries from the retry
// topic; every message is consumed and the offsets reach the end. With the broker
// refusing CONSUMER_SEND_MSG_BACK, the fallback sends the failed messages' bodies to the
// retry topic itself, from the worker, after the call: what reached the retry topic must
// be those bodies.
func TestLentBodiesConsumeAll(t *testing.T) {
	for _, tc := range []struct {
		name     string
		readLoop time.Duration
		fallback bool
	}{
		{"read loop", time.Millisecond, false},
		{"workers", 0, false},
		{"send-back fallback", time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, fakebroker.WithTopic("t", 8), fastDelays())
			if tc.fallback {
				_, err := c.Brokers()[0].Inject(fakebroker.Fault{Code: protocol.RequestConsumerSendMsgBack, Fail: protocol.ResponseSystemError})
				require.NoError(t, err)
			}
			const n = 4000
			produceLent(t, c, "t", 0, n)
			var bodies bodyChecker
			seen := newTally()
			var failed atomic.Int64
			pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithLentBodies(),
				consumer.WithReadLoopConsume(tc.readLoop), consumer.WithConsumeMessageBatchMaxSize(4)),
				func(_ context.Context, msgs []*message.Ext, cc *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
					bodies.check(msgs)
					seen.add(msgs)
					// Every 97th message fails on its first delivery, with those after
					// it in its call: sent back, and consumed again from the retry topic.
					for k, m := range msgs {
						if i, _ := strconv.Atoi(m.Property("i")); i%97 == 0 && m.ReconsumeTimes == 0 {
							failed.Add(1)
							cc.AckIndex = k - 1
							return consumer.ConsumeSuccess
						}
					}
					return consumer.ConsumeSuccess
				})
			defer shutdown(t, pc)
			waitFor(t, 60*time.Second, "every message", func() bool { return seen.distinct() == n || bodies.bad.Load() > 0 })
			bodies.requireClean(t)
			require.Positive(t, failed.Load())
			waitOffsetsAtEnd(t, c.Brokers()[0], "g", "t", 8)
			if tc.fallback {
				retried := c.RetryMessages("g")
				require.NotEmpty(t, retried)
				for _, m := range retried {
					bodies.checkNow([]*message.Ext{m})
				}
				bodies.requireClean(t)
			}
		})
	}
}

// A message whose send-back and fallback both fail is consumed again locally 5 s later
// with its body intact, although answers pulled meanwhile reuse the pool's buffers.
func TestLentBodyKeptForALocalRetry(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1), fastDelays())
	b := c.Brokers()[0]
	_, err := b.Inject(fakebroker.Fault{Code: protocol.RequestConsumerSendMsgBack, Fail: protocol.ResponseSystemError})
	require.NoError(t, err)
	_, err = b.Inject(fakebroker.Fault{Code: protocol.RequestSendMessageV2, Fail: protocol.ResponseSystemError})
	require.NoError(t, err)
	produceLent(t, c, "t", 0, 5)
	var bodies bodyChecker
	var retried atomic.Bool
	seen := newTally()
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithLentBodies()),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			bodies.check(msgs)
			seen.add(msgs)
			if msgs[0].Property("i") == "2" {
				if msgs[0].ReconsumeTimes == 0 {
					return consumer.ReconsumeLater
				}
				retried.Store(true)
			}
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 10*time.Second, "the first five", func() bool { return seen.distinct() == 5 })
	// Small answers while the message waits: each read into a buffer of the same size
	// class as the first answer's, the one its body is in.
	for k := 5; !retried.Load() && bodies.bad.Load() == 0; k += 5 {
		require.Less(t, k, 2000, "no local retry")
		produceLent(t, c, "t", k, k+5)
		time.Sleep(50 * time.Millisecond)
	}
	bodies.requireClean(t)
}

// Orderly consumption with WithLentBodies: every body is intact for its listener call,
// also in a batch consumed again after a suspend (while other queues' answers reuse the
// pool's buffers) and in the dead-letter queue, which a message past MaxReconsumeTimes
// reaches from the worker after its call; the cache is kept small so that the queues'
// commits and new answers turn the buffers over all along.
func TestLentBodiesConsumeAllOrderly(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 8), fastDelays())
	const n = 3000
	produceLent(t, c, "t", 0, n)
	var bodies bodyChecker
	seen := newTally()
	var suspended atomic.Int64
	pc := startOrderly(t, "g", "t", fastOptions(c, consumer.WithLentBodies(), consumer.WithConsumeMessageBatchMaxSize(4),
		consumer.WithPullThresholdForQueue(40), consumer.WithSuspendCurrentQueueTime(10*time.Millisecond),
		consumer.WithMaxReconsumeTimes(1)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.OrderlyContext) consumer.OrderlyStatus {
			bodies.check(msgs)
			seen.add(msgs)
			for _, m := range msgs {
				// Every 89th message is suspended on its first delivery, every 623rd on
				// every one: after one local retry it goes to the dead-letter queue.
				if i, _ := strconv.Atoi(m.Property("i")); i%623 == 0 || i%89 == 0 && m.ReconsumeTimes == 0 {
					suspended.Add(1)
					return consumer.SuspendCurrentQueueAMoment
				}
			}
			return consumer.OrderlySuccess
		})
	defer shutdown(t, pc)
	const dead = (n-1)/623 + 1
	waitFor(t, 60*time.Second, "every message", func() bool {
		return seen.distinct() == n && len(c.DLQMessages("g")) >= dead || bodies.bad.Load() > 0
	})
	bodies.requireClean(t)
	require.Greater(t, suspended.Load(), int64(n/89))
	for _, m := range c.DLQMessages("g") {
		bodies.checkNow([]*message.Ext{m})
	}
	bodies.requireClean(t)
	waitOffsetsAtEnd(t, c.Brokers()[0], "g", "t", 8)
}

// deadLetterBodies checks the bodies the send-back hooks see of dead-lettered messages,
// and counts those of each 613th message.
type deadLetterBodies struct {
	bodies *bodyChecker
	n      atomic.Int64
	mu     sync.Mutex
	of613  map[string]bool
}

func (h *deadLetterBodies) OnSendBack(e consumer.SendBackEvent) {
	if e.DeadLetter {
		h.bodies.checkNow([]*message.Ext{e.Msg})
		h.n.Add(1)
		if i, _ := strconv.Atoi(e.Msg.Property("i")); i%613 == 0 {
			h.mu.Lock()
			h.of613[e.Msg.Property("i")] = true
			h.mu.Unlock()
		}
	}
}

func (h *deadLetterBodies) count613() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.of613)
}

// POP consumption with WithLentBodies: every body is intact for the length of its
// listener call while later pops reuse the buffers, through acks, retries (the broker
// delivers the message again from the POP retry topic, from its own store) and
// dead-letter sends, whose send-back hooks read the body after the call.
func TestLentBodiesConsumeAllPop(t *testing.T) {
	c := popCluster(t, "g", "t", 4)
	const n = 3000
	produceLent(t, c, "t", 0, n)
	var bodies bodyChecker
	dead := &deadLetterBodies{bodies: &bodies, of613: map[string]bool{}}
	seen := newTally()
	var failed atomic.Int64
	pc := startConsumer(t, "g", "t", consumer.All(), popOptions(c, consumer.WithLentBodies(), consumer.WithHooks(dead),
		consumer.WithConsumeMessageBatchMaxSize(4), consumer.WithMaxReconsumeTimes(1),
		consumer.WithPopDelayLevels(20*time.Millisecond)),
		func(_ context.Context, msgs []*message.Ext, cc *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			bodies.check(msgs)
			seen.add(msgs)
			// Every 97th message fails on its first delivery, with those after it in its
			// call; every 613th on every delivery: after one retry it is dead-lettered.
			for k, m := range msgs {
				if i, _ := strconv.Atoi(m.Property("i")); i%613 == 0 || i%97 == 0 && m.ReconsumeTimes == 0 {
					failed.Add(1)
					cc.AckIndex = k - 1
					return consumer.ConsumeSuccess
				}
			}
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	// Every 613th message is dead-lettered; others too, at times: a message after a
	// failing one in its call fails with it, and may again on its second delivery.
	const of613 = (n-1)/613 + 1
	waitFor(t, 60*time.Second, "every message, and the dead letters", func() bool {
		return seen.distinct() == n && dead.count613() == of613 || bodies.bad.Load() > 0
	}, func() string {
		return fmt.Sprintf("%d of %d messages, %d of %d 613th dead letters, stats %+v", seen.distinct(), n, dead.count613(), of613, pc.Stats().Pop)
	})
	bodies.requireClean(t)
	require.Greater(t, failed.Load(), int64(n/97))
	waitFor(t, 10*time.Second, "each dead letter in the dead-letter queue and counted", func() bool {
		k := dead.n.Load()
		return pc.Stats().Pop.DeadLettered == k && int64(len(c.DLQMessages("g"))) == k
	})
	bodies.requireClean(t)
}

// A POP consumer lending bodies shut down with listener calls queued, a retry delay and
// dead-letter sends on the way: no reference is released twice (that would panic) and
// no body changes under a call; what it did not finish comes back once its invisible
// time is over, and a second member consumes it, bodies intact.
func TestLentBodiesPopShutdownMidway(t *testing.T) {
	c := popCluster(t, "g", "t", 4)
	const n = 2000
	produceLent(t, c, "t", 0, n)
	var bodies bodyChecker
	seen := newTally()
	listener := func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
		bodies.check(msgs)
		seen.add(msgs)
		if i, _ := strconv.Atoi(msgs[0].Property("i")); i%50 == 0 && msgs[0].ReconsumeTimes == 0 {
			return consumer.ReconsumeLater // MaxReconsumeTimes 0: straight to the dead-letter queue
		}
		time.Sleep(time.Millisecond) // calls queue up behind the four workers
		return consumer.ConsumeSuccess
	}
	opts := popOptions(c, consumer.WithLentBodies(), consumer.WithPopInvisibleTime(time.Second),
		consumer.WithMaxReconsumeTimes(0), consumer.WithConsumeGoroutineNums(4))
	first := startConsumer(t, "g", "t", consumer.All(), opts, listener)
	waitFor(t, 20*time.Second, "a tenth of the messages", func() bool { return seen.distinct() >= n/10 })
	shutdown(t, first)
	bodies.requireClean(t)
	require.Less(t, seen.distinct(), n, "shut down midway")

	second := startConsumer(t, "g", "t", consumer.All(), opts, listener)
	defer shutdown(t, second)
	waitFor(t, 60*time.Second, "every message, with those the first member left", func() bool {
		return seen.distinct() == n || bodies.bad.Load() > 0
	}, func() string { return fmt.Sprintf("%d of %d", seen.distinct(), n) })
	bodies.requireClean(t)
}
