package offset

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rmqpush/rmqpush/message"
)

// fakeBroker is a hand-written BrokerAPI over a map, with failures on demand.
type fakeBroker struct {
	mu        sync.Mutex
	offsets   map[message.Queue]int64
	queryErr  error
	updateErr map[string]error // by broker name
	updates   []message.Queue
}

func newFakeBroker() *fakeBroker {
	return &fakeBroker{offsets: map[message.Queue]int64{}, updateErr: map[string]error{}}
}

func (b *fakeBroker) QueryConsumerOffset(_ context.Context, group string, q message.Queue) (int64, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.queryErr != nil {
		return 0, false, b.queryErr
	}
	off, ok := b.offsets[q]
	return off, ok, nil
}

func (b *fakeBroker) UpdateConsumerOffset(_ context.Context, group string, q message.Queue, off int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.updateErr[q.BrokerName]; err != nil {
		return err
	}
	b.offsets[q] = off
	b.updates = append(b.updates, q)
	return nil
}

func (b *fakeBroker) takeUpdates() []message.Queue {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.updates
	b.updates = nil
	return u
}

var (
	qa0 = message.Queue{Topic: "t", BrokerName: "a", QueueID: 0}
	qa1 = message.Queue{Topic: "t", BrokerName: "a", QueueID: 1}
	qb0 = message.Queue{Topic: "t", BrokerName: "b", QueueID: 0}
)

func TestRemoteReadRules(t *testing.T) {
	ctx := context.Background()
	b := newFakeBroker()
	b.offsets[qa0] = 42
	s := NewRemoteStore("g", b)

	off, err := s.Read(ctx, qa0, ReadFromMemory)
	require.NoError(t, err)
	require.Equal(t, NoOffset, off, "nothing in memory yet")

	off, err = s.Read(ctx, qa0, MemoryFirstThenStore)
	require.NoError(t, err)
	require.Equal(t, int64(42), off, "falls through to the broker")
	off, err = s.Read(ctx, qa0, ReadFromMemory)
	require.NoError(t, err)
	require.Equal(t, int64(42), off, "the broker's answer is cached")

	off, err = s.Read(ctx, qa1, ReadFromStore)
	require.NoError(t, err)
	require.Equal(t, NoOffset, off, "QUERY_NOT_FOUND is a new group")

	b.queryErr = errors.New("SYSTEM_BUSY")
	_, err = s.Read(ctx, qa1, ReadFromStore)
	require.ErrorContains(t, err, "SYSTEM_BUSY", "any other failure is unknown, not -1")
	require.ErrorContains(t, err, "t@a:1")

	_, err = s.Read(ctx, qa1, ReadType(9))
	require.Error(t, err)
}

func TestRemoteUpdateRules(t *testing.T) {
	s := NewRemoteStore("g", newFakeBroker())
	s.Update(qa0, 10, true)
	s.Update(qa0, 5, true)
	require.Equal(t, int64(10), s.Table()[qa0], "increase-only ignores a smaller offset")
	s.Update(qa0, 5, false)
	require.Equal(t, int64(5), s.Table()[qa0])

	s.UpdateAndFreeze(qa0, 100)
	s.Update(qa0, 200, false)
	s.Update(qa0, 300, true)
	require.Equal(t, int64(100), s.Table()[qa0], "a frozen offset is not changed")
	s.Remove(qa0)
	require.NotContains(t, s.Table(), qa0)
	s.Update(qa0, 7, true)
	require.Equal(t, int64(7), s.Table()[qa0], "removal thaws")
}

func TestRemotePersistAllWritesOnlyChanges(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	b := newFakeBroker()
	s := NewRemoteStore("g", b)
	all := []message.Queue{qa0, qa1, qb0}
	for i, q := range all {
		s.Update(q, int64(i+1), true)
	}
	require.NoError(t, s.PersistAll(ctx, all))
	require.ElementsMatch(t, all, b.takeUpdates())

	require.NoError(t, s.PersistAll(ctx, all))
	require.Empty(t, b.takeUpdates(), "nothing changed, nothing sent")

	s.Update(qa1, 9, true)
	require.NoError(t, s.PersistAll(ctx, all))
	require.Equal(t, []message.Queue{qa1}, b.takeUpdates())

	// A queue read from the broker is already persisted.
	b.offsets[qb0] = 50
	_, err := s.Read(ctx, qb0, ReadFromStore)
	require.NoError(t, err)
	require.NoError(t, s.PersistAll(ctx, all))
	require.Empty(t, b.takeUpdates())
}

func TestRemotePersistAllKeepsFailedForNextRound(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	b := newFakeBroker()
	s := NewRemoteStore("g", b)
	all := []message.Queue{qa0, qb0}
	s.Update(qa0, 1, true)
	s.Update(qb0, 2, true)
	b.updateErr["b"] = errors.New("connection refused")
	err := s.PersistAll(ctx, all)
	require.ErrorContains(t, err, "t@b:0")
	require.ErrorContains(t, err, "connection refused")
	require.Equal(t, []message.Queue{qa0}, b.takeUpdates())

	delete(b.updateErr, "b")
	require.NoError(t, s.PersistAll(ctx, all))
	require.Empty(t, b.takeUpdates(), "a failed write may still land: not retried at once")
	s.table.grace = 0
	s.table.entries[qb0].unsure = time.Time{}
	require.NoError(t, s.PersistAll(ctx, all))
	require.Equal(t, []message.Queue{qb0}, b.takeUpdates(), "the failed write is retried")
	require.Equal(t, int64(2), b.offsets[qb0])
}

func TestRemotePersistAllForgetsUnassigned(t *testing.T) {
	ctx := context.Background()
	b := newFakeBroker()
	s := NewRemoteStore("g", b)
	s.Update(qa0, 1, true)
	s.Update(qa1, 2, true)
	require.NoError(t, s.PersistAll(ctx, []message.Queue{qa0}))
	require.Equal(t, map[message.Queue]int64{qa0: 1}, s.Table())
	require.Equal(t, []message.Queue{qa0}, b.takeUpdates())
}

func TestRemotePersistOne(t *testing.T) {
	ctx := context.Background()
	b := newFakeBroker()
	s := NewRemoteStore("g", b)
	require.NoError(t, s.Persist(ctx, qa0), "nothing held, nothing to write")
	require.Empty(t, b.takeUpdates())
	s.Update(qa0, 3, true)
	require.NoError(t, s.Persist(ctx, qa0))
	require.NoError(t, s.Persist(ctx, qa0), "Persist writes even when unchanged")
	require.Equal(t, []message.Queue{qa0, qa0}, b.takeUpdates())
}

func TestRemoteConcurrentUpdates(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := NewRemoteStore("g", newFakeBroker())
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(0); i < 1000; i++ {
				s.Update(qa0, i, true)
				_ = s.PersistAll(context.Background(), []message.Queue{qa0})
			}
		}()
	}
	wg.Wait()
	require.Equal(t, int64(999), s.Table()[qa0])
}

func TestRemoteFlushWritesOnlyChanges(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	b := newFakeBroker()
	s := NewRemoteStore("g", b)
	require.NoError(t, s.Flush(ctx), "nothing held")
	s.Update(qa0, 1, true)
	s.Update(qb0, 2, true)
	require.NoError(t, s.Flush(ctx))
	require.ElementsMatch(t, []message.Queue{qa0, qb0}, b.takeUpdates())
	require.NoError(t, s.Flush(ctx))
	require.Empty(t, b.takeUpdates())
	s.Update(qa0, 5, true)
	require.NoError(t, s.Flush(ctx))
	require.Equal(t, []message.Queue{qa0}, b.takeUpdates())
	require.Equal(t, map[message.Queue]int64{qa0: 5, qb0: 2}, s.Table(), "nothing forgotten")
}
