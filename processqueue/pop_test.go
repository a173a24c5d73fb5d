package processqueue

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
)

func popMsgs(n int, store int64) []*message.Ext {
	out := make([]*message.Ext, n)
	for i := range out {
		out[i] = &message.Ext{Message: message.Message{Body: make([]byte, 10)}, StoreTimestamp: store + int64(i)}
	}
	return out
}

func TestPopQueueCountsAndOldest(t *testing.T) {
	now := time.Now()
	q := NewPopQueue(now)
	b := NewPopBatch(popMsgs(3, 100), []string{"h0", "h1", "h2"}, now, now.Add(time.Minute), nil)
	q.Add(b)
	require.Equal(t, int64(3), q.Count())
	require.Equal(t, int64(30), q.Size())
	ts, ok := q.OldestStoreTimestamp()
	require.True(t, ok)
	require.Equal(t, int64(100), ts)

	e, ok := b.Finish(0, PopActionAck, 0)
	require.True(t, ok)
	require.Equal(t, "h0", e.Handle)
	_, ok = b.Finish(0, PopActionAck, 0)
	require.False(t, ok, "a message finishes once")
	ts, _ = q.OldestStoreTimestamp()
	require.Equal(t, int64(101), ts, "the oldest left")
	b.Finish(1, PopActionRetry, time.Second)
	b.Finish(2, PopActionDLQ, time.Second)
	require.Zero(t, q.Count())
	require.Zero(t, q.Size())
	require.Empty(t, q.Batches())
	_, ok = q.OldestStoreTimestamp()
	require.False(t, ok)

	require.False(t, q.PopExpired(now.Add(PullMaxIdleTime)))
	require.True(t, q.PopExpired(now.Add(PullMaxIdleTime+time.Second)))
	q.SetDropped()
	require.True(t, q.Dropped())
}

// A result that comes during an extension waits for it and gets the new handle; one
// that comes after an extension failed gets the old.
func TestPopBatchExtension(t *testing.T) {
	now := time.Now()
	q := NewPopQueue(now)
	b := NewPopBatch(popMsgs(3, 1), []string{"a", "b", "c"}, now, now.Add(10*time.Second), nil)
	q.Add(b)
	require.Empty(t, b.DueForExtension(now, 5*time.Second, time.Minute, nil), "not due yet")
	due := b.DueForExtension(now.Add(6*time.Second), 5*time.Second, time.Minute, nil)
	require.Equal(t, []int{0, 1, 2}, due)
	require.Empty(t, b.DueForExtension(now.Add(6*time.Second), 5*time.Second, time.Minute, nil), "extending already")

	_, ok := b.Finish(0, PopActionRetry, 3*time.Second)
	require.False(t, ok, "waits for the extension")
	action, delay, e := b.EndExtend(0, true, "a2", now.Add(time.Minute))
	require.Equal(t, PopActionRetry, action)
	require.Equal(t, 3*time.Second, delay)
	require.Equal(t, "a2", e.Handle)

	action, _, _ = b.EndExtend(1, true, "b2", now.Add(time.Minute))
	require.Equal(t, PopActionNone, action, "no result yet")
	e, ok = b.Finish(1, PopActionAck, 0)
	require.True(t, ok)
	require.Equal(t, "b2", e.Handle)
	require.Equal(t, now.Add(time.Minute), e.Deadline)

	b.EndExtend(2, false, "", time.Time{})
	e, ok = b.Finish(2, PopActionAck, 0)
	require.True(t, ok)
	require.Equal(t, "c", e.Handle, "the extension failed: the old handle")
	require.Zero(t, q.Count())

	old := NewPopBatch(popMsgs(1, 1), []string{"x"}, now.Add(-time.Hour), now.Add(time.Second), nil)
	require.Empty(t, old.DueForExtension(now, 5*time.Second, time.Minute, nil), "held past maxHold: not extended")
}

func TestPopBatchBeginConsume(t *testing.T) {
	now := time.Now()
	b := NewPopBatch(popMsgs(2, 1), []string{"a", "b"}, now, now.Add(time.Second), nil)
	NewPopQueue(now).Add(b)
	require.Equal(t, []bool{true, true}, b.BeginConsume(0, 2, now, nil))
	require.Equal(t, now, b.Entry(1).ConsumeStart)
	require.Equal(t, []bool{false}, b.BeginConsume(1, 2, now.Add(2*time.Second), nil), "past its deadline")
}

func TestPopQueueConcurrentFinish(t *testing.T) {
	now := time.Now()
	q := NewPopQueue(now)
	var batches []*PopBatch
	for range 8 {
		b := NewPopBatch(popMsgs(32, 1), make([]string, 32), now, now.Add(time.Minute), nil)
		q.Add(b)
		batches = append(batches, b)
	}
	var wg sync.WaitGroup
	for _, b := range batches {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 32 {
				b.Finish(i, PopActionAck, 0)
			}
		}()
		go func() {
			defer wg.Done()
			_, _ = q.OldestStoreTimestamp()
			_ = q.Batches()
			b.DueForExtension(now, time.Minute, time.Hour, nil)
		}()
	}
	wg.Wait()
	for _, b := range batches {
		for i := range 32 {
			b.EndExtend(i, true, "n", now)
		}
	}
	require.Zero(t, q.Count())
	require.Empty(t, q.Batches())
}
