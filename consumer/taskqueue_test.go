package consumer

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/pull"
)

func TestTaskQueueBatchesInOrderAndGrows(t *testing.T) {
	q := newTaskQueue()
	req := &pull.Request{}
	msgs := make([]*message.Ext, 300)
	for i := range msgs {
		msgs[i] = &message.Ext{QueueOffset: int64(i)}
	}
	require.True(t, q.pushBatches(req, msgs, 7))
	require.Equal(t, 43, q.len())
	next := int64(0)
	for q.len() > 0 {
		tk, ok := q.pop()
		require.True(t, ok)
		require.LessOrEqual(t, len(tk.msgs), 7)
		require.Equal(t, len(tk.msgs), cap(tk.msgs), "capacity clipped: a listener's append cannot reach the next batch")
		for _, m := range tk.msgs {
			require.Equal(t, next, m.QueueOffset)
			next++
		}
	}
	require.Equal(t, int64(300), next)
}

func TestTaskQueueCloseWakesWorkers(t *testing.T) {
	q := newTaskQueue()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok := q.pop()
			require.False(t, ok)
		}()
	}
	q.close()
	wg.Wait()
	require.False(t, q.push(task{}))
	require.False(t, q.pushBatches(&pull.Request{}, []*message.Ext{{}}, 1))
}
