package consumer

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
	"github.com/rmqpush/rmqpush/pull"
	"github.com/rmqpush/rmqpush/remoting"
)

// A failed popped message's retry delay is Java's: popDelayLevel[reconsume times], or
// the level the context asks for; the last one beyond the table; the dead-letter queue
// from MaxReconsumeTimes on, or for level -1.
func TestPopRetryDelays(t *testing.T) {
	c := &PushConsumer{cfg: defaultCfg(), listener: ConcurrentlyFunc(nil)}
	for _, tc := range []struct {
		times, level int32
		action       processqueue.PopAction
		delay        time.Duration
	}{
		{0, 0, processqueue.PopActionRetry, 10 * time.Second}, // golden p_pop_533: 10 s
		{1, 0, processqueue.PopActionRetry, 30 * time.Second},
		{15, 0, processqueue.PopActionRetry, 2 * time.Hour},
		{0, 3, processqueue.PopActionRetry, 2 * time.Minute},
		{0, 40, processqueue.PopActionRetry, 2 * time.Hour},
		{0, -1, processqueue.PopActionDLQ, 2 * time.Hour},
		{16, 0, processqueue.PopActionDLQ, 2 * time.Hour},
	} {
		action, delay := c.popRetry(&message.Ext{ReconsumeTimes: tc.times}, tc.level)
		require.Equal(t, tc.action, action, "%+v", tc)
		require.Equal(t, tc.delay, delay, "%+v", tc)
	}
	c.cfg.maxReconsumeTimes = 2
	action, _ := c.popRetry(&message.Ext{ReconsumeTimes: 2}, 0)
	require.Equal(t, processqueue.PopActionDLQ, action)
}

// nopPopBroker is a PopBroker nothing is sent to.
type nopPopBroker struct{}

func (nopPopBroker) FindBrokerAddr(string, int64, bool) (string, bool, bool) { return "", false, false }
func (nopPopBroker) PopAsync(string, *protocol.PopMessageRequest, time.Duration, remoting.BodySource, func(*client.PopResult, error)) error {
	return client.ErrClosed
}
func (nopPopBroker) AckAsync(string, *protocol.AckMessageRequest, time.Duration, func(error)) error {
	return client.ErrClosed
}
func (nopPopBroker) BatchAckAsync(string, *protocol.BatchAckRequest, time.Duration, func(error)) error {
	return client.ErrClosed
}
func (nopPopBroker) ChangeInvisibleTimeAsync(string, *protocol.ChangeInvisibleTimeRequest, time.Duration, func(protocol.ExtraInfo, error)) error {
	return client.ErrClosed
}
func (nopPopBroker) RequestRouteRefresh() {}

type noSubs struct{}

func (noSubs) Subscription(string) (protocol.SubscriptionData, bool) {
	return protocol.SubscriptionData{}, false
}

// The popped messages whose tasks stop drops, or that come after it, are abandoned:
// they leave their queue's counts and nothing extends their invisible time any more.
func TestPopTasksDroppedAtStopAreAbandoned(t *testing.T) {
	c := &PushConsumer{cfg: defaultCfg(), listener: ConcurrentlyFunc(nil)}
	c.cfg.consumeBatchMaxSize = 1
	s := newConcurrentService(c, nil)
	svc, err := pull.NewPopService(pull.PopConfig{Group: "g", Broker: nopPopBroker{}, Dispatcher: s, Subs: noSubs{},
		Limits:     func(message.Queue) pull.Limits { return pull.Limits{} },
		DeadLetter: func(*message.Ext) bool { return false }, Async: func(fn func()) { fn() },
		BatchSize: 32, InvisibleTime: time.Minute, RequestTimeout: time.Second, MaxHold: time.Minute})
	require.NoError(t, err)
	c.popService = svc
	pq := processqueue.NewPopQueue(time.Now())
	r := pull.NewPopRequest(message.Queue{Topic: "t", BrokerName: "b", QueueID: -1}, pq, protocol.InitModeMin, 1)
	batch := func(n int) *processqueue.PopBatch {
		msgs, handles := make([]*message.Ext, n), make([]string, n)
		for i := range msgs {
			msgs[i] = &message.Ext{QueueOffset: int64(i)}
			handles[i] = "0 1 60000 0 0 b 0 " + strconv.Itoa(i)
		}
		b := processqueue.NewPopBatch(msgs, handles, time.Now(), time.Now().Add(time.Minute), nil)
		pq.Add(b)
		return b
	}
	s.DispatchPop(r, batch(3)) // no worker runs: they stay queued
	require.Equal(t, int64(3), pq.Count())
	require.NoError(t, s.stop(context.Background()))
	require.Zero(t, pq.Count())
	s.DispatchPop(r, batch(2)) // popped before the pops stopped, dispatched after
	require.Zero(t, pq.Count())
	require.Empty(t, pq.Batches())
	require.Equal(t, int64(5), svc.Counters().Abandoned.Load())
}
