package integration

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// recorder implements every hook interface and keeps what it was told.
type recorder struct {
	mu        sync.Mutex
	created   *consumer.PushConsumer
	closed    *consumer.PushConsumer
	starts    int
	ends      []consumer.ConsumeCall // copies (the consumer reuses the value it passes)
	endCtxOK  int
	pulls     []consumer.PullEvent
	sendBacks []consumer.SendBackEvent
	retries   []localRetry
}

type localRetry struct {
	q     message.Queue
	n     int
	delay time.Duration
}

type ctxKey struct{}

func (r *recorder) OnNewConsumer(c *consumer.PushConsumer) { r.mu.Lock(); r.created = c; r.mu.Unlock() }
func (r *recorder) OnConsumerShutdown(c *consumer.PushConsumer) {
	r.mu.Lock()
	r.closed = c
	r.mu.Unlock()
}

func (r *recorder) OnConsumeStart(ctx context.Context, call *consumer.ConsumeCall) context.Context {
	r.mu.Lock()
	r.starts++
	r.mu.Unlock()
	return context.WithValue(ctx, ctxKey{}, call.Queue)
}

func (r *recorder) OnConsumeEnd(ctx context.Context, call *consumer.ConsumeCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := *call
	c.Msgs = append([]*message.Ext(nil), call.Msgs...)
	r.ends = append(r.ends, c)
	if q, ok := ctx.Value(ctxKey{}).(message.Queue); ok && q == call.Queue {
		r.endCtxOK++
	}
}

func (r *recorder) OnPull(e consumer.PullEvent) {
	r.mu.Lock()
	r.pulls = append(r.pulls, e)
	r.mu.Unlock()
}
func (r *recorder) OnSendBack(e consumer.SendBackEvent) {
	r.mu.Lock()
	r.sendBacks = append(r.sendBacks, e)
	r.mu.Unlock()
}

func (r *recorder) OnLocalRetry(e consumer.LocalRetryEvent) {
	r.mu.Lock()
	r.retries = append(r.retries, localRetry{e.Queue, e.Count, e.Delay})
	r.mu.Unlock()
}

func (r *recorder) sendBackCount() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.sendBacks) }
func (r *recorder) retryCount() int    { r.mu.Lock(); defer r.mu.Unlock(); return len(r.retries) }

func TestHooksSeeCallsPullsAndSendBacks(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 2), fastDelays())
	want := produce(t, c, "t", "m", 20, "")
	rec := &recorder{}
	seen := newTally()
	ctxSeen := make(chan bool, 100)
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithHooks(rec), consumer.WithMaxReconsumeTimes(1)),
		func(ctx context.Context, msgs []*message.Ext, cc *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			q, _ := ctx.Value(ctxKey{}).(message.Queue)
			select {
			case ctxSeen <- q == cc.Queue:
			default:
			}
			seen.add(msgs)
			if string(msgs[0].Body) == "m-3" {
				return consumer.ReconsumeLater // retried once, then a dead letter
			}
			return consumer.ConsumeSuccess
		})
	rec.mu.Lock()
	require.Same(t, pc, rec.created, "OnNewConsumer got the consumer")
	rec.mu.Unlock()
	waitFor(t, 20*time.Second, "the dead letter", func() bool { return len(c.DLQMessages("g")) == 1 })
	waitFor(t, 10*time.Second, "every message", func() bool { return seen.distinct() == len(want) })
	waitFor(t, 10*time.Second, "the second send-back", func() bool { return rec.sendBackCount() == 2 })
	shutdown(t, pc)
	require.True(t, <-ctxSeen, "the listener got the context OnConsumeStart returned")

	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Same(t, pc, rec.closed, "OnConsumerShutdown")
	require.Equal(t, rec.starts, len(rec.ends))
	require.Equal(t, len(rec.ends), rec.endCtxOK, "OnConsumeEnd got the listener's context")
	require.Equal(t, seen.deliveries(), len(rec.ends), "batch size 1: one call per delivery")
	failures := 0
	for _, e := range rec.ends {
		require.Equal(t, "g", e.Group)
		require.Equal(t, pc.ClientID(), e.ClientID)
		require.NotEmpty(t, e.ClientID)
		require.Len(t, e.Msgs, 1)
		m := e.Msgs[0]
		require.False(t, m.CachedAt.IsZero(), "CachedAt is set")
		require.False(t, e.Begin.Before(m.CachedAt), "cached before the call began")
		require.GreaterOrEqual(t, e.Took, time.Duration(0))
		if string(m.Body) == "m-3" {
			failures++
			require.False(t, e.Success)
			require.Equal(t, "RECONSUME_LATER", e.Status)
			require.Equal(t, -1, e.AckIndex)
			require.Equal(t, consumer.ReturnFailed, e.ReturnType)
			continue
		}
		require.True(t, e.Success)
		require.Equal(t, "CONSUME_SUCCESS", e.Status)
		require.Equal(t, 0, e.AckIndex)
		require.Equal(t, consumer.ReturnSuccess, e.ReturnType)
	}
	require.Equal(t, 2, failures, "the first delivery and its retry")

	found := 0
	for _, p := range rec.pulls {
		require.Equal(t, "g", p.Group)
		require.Equal(t, pc.ClientID(), p.ClientID)
		require.Equal(t, c.Brokers()[0].Name(), p.Queue.BrokerName)
		require.NoError(t, p.Err)
		found += p.Found
	}
	require.GreaterOrEqual(t, found, len(want)+1, "the messages and the retry")

	require.Len(t, rec.sendBacks, 2)
	first, second := rec.sendBacks[0], rec.sendBacks[1]
	require.Equal(t, "m-3", string(first.Msg.Body))
	require.False(t, first.DeadLetter, "first failure: a retry")
	require.True(t, second.DeadLetter, "reconsume times 1 = MaxReconsumeTimes: the dead-letter queue")
	for _, e := range rec.sendBacks {
		require.NoError(t, e.Err)
		require.False(t, e.Fallback)
		require.Equal(t, "g", e.Group)
		require.Equal(t, pc.ClientID(), e.ClientID)
	}
	require.Empty(t, rec.retries)
}

func TestHooksSeeFallbackAndLocalRetry(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1), fastDelays())
	b := c.Brokers()[0]
	_, err := b.Inject(fakebroker.Fault{Code: protocol.RequestConsumerSendMsgBack, Fail: protocol.ResponseSystemError})
	require.NoError(t, err)
	_, err = b.Inject(fakebroker.Fault{Code: protocol.RequestSendMessageV2, Fail: protocol.ResponseSystemError})
	require.NoError(t, err)
	produce(t, c, "t", "m", 1, "")
	rec := &recorder{}
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithHooks(rec)),
		func(context.Context, []*message.Ext, *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			return consumer.ReconsumeLater
		})
	defer shutdown(t, pc)
	waitFor(t, 10*time.Second, "a local retry", func() bool { return rec.retryCount() > 0 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Equal(t, localRetry{q: message.Queue{Topic: "t", BrokerName: b.Name(), QueueID: 0}, n: 1, delay: 5 * time.Second}, rec.retries[0])
	require.NotEmpty(t, rec.sendBacks)
	e := rec.sendBacks[0]
	require.True(t, e.Fallback, "send-back failed, the fallback was tried")
	require.Error(t, e.Err, "and failed too")
	require.False(t, e.DeadLetter)
}

func TestHooksOrderly(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1), fastDelays())
	produce(t, c, "t", "m", 3, "")
	rec := &recorder{}
	var mu sync.Mutex
	suspended := false
	pc, err := consumer.NewPushConsumer("g", fastOptions(c, consumer.WithHooks(rec),
		consumer.WithSuspendCurrentQueueTime(10*time.Millisecond))...)
	require.NoError(t, err)
	require.NoError(t, pc.Subscribe("t", consumer.All()))
	done := make(chan struct{})
	require.NoError(t, pc.RegisterListener(consumer.OrderlyFunc(func(ctx context.Context, msgs []*message.Ext, _ *consumer.OrderlyContext) consumer.OrderlyStatus {
		mu.Lock()
		defer mu.Unlock()
		if !suspended {
			suspended = true
			return consumer.SuspendCurrentQueueAMoment
		}
		if string(msgs[0].Body) == "m-2" {
			close(done)
		}
		return consumer.OrderlySuccess
	})))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, pc.Start(ctx))
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("orderly messages not consumed")
	}
	shutdown(t, pc)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Equal(t, []localRetry{{q: message.Queue{Topic: "t", BrokerName: c.Brokers()[0].Name()}, n: 1, delay: 10 * time.Millisecond}}, rec.retries)
	require.Len(t, rec.ends, 4, "a suspended call and three consumed")
	require.True(t, rec.ends[0].Orderly)
	require.Equal(t, consumer.ReturnFailed, rec.ends[0].ReturnType)
	require.Equal(t, "SUSPEND_CURRENT_QUEUE_A_MOMENT", rec.ends[0].Status)
	for _, e := range rec.ends[1:] {
		require.Equal(t, "SUCCESS", e.Status)
		require.True(t, e.Success)
	}
	require.Equal(t, len(rec.ends), rec.endCtxOK)
}
