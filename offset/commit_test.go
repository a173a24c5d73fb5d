package offset

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rmqpush/rmqpush/message"
)

// blockingBroker is a fakeBroker whose updates wait for release.
type blockingBroker struct {
	*fakeBroker
	started chan message.Queue
	release chan struct{}
}

func (b *blockingBroker) UpdateConsumerOffset(ctx context.Context, group string, q message.Queue, off int64) error {
	b.started <- q
	<-b.release
	return b.fakeBroker.UpdateConsumerOffset(ctx, group, q, off)
}

func TestPullCommitClaimsTheQueue(t *testing.T) {
	ctx := context.Background()
	b := newFakeBroker()
	s := NewRemoteStore("g", b)

	_, ok := s.BeginPullCommit(qa0)
	require.False(t, ok, "no offset in memory")
	s.Update(qa0, 0, true)
	_, ok = s.BeginPullCommit(qa0)
	require.False(t, ok, "an offset of 0 is not committed with a pull (Java's rule)")

	s.Update(qa0, 10, true)
	c, ok := s.BeginPullCommit(qa0)
	require.True(t, ok)
	require.Equal(t, int64(10), c.Offset())
	_, ok = s.BeginPullCommit(qa0)
	require.False(t, ok, "one write in flight per queue")

	s.Update(qa0, 12, true)
	require.NoError(t, s.Flush(ctx))
	require.Empty(t, b.takeUpdates(), "the pull carries the offset: no update beside it")

	s.EndPullCommit(c, CommitStored)
	s.Update(qa0, 12, true)
	require.NoError(t, s.Flush(ctx))
	require.Equal(t, []message.Queue{qa0}, b.takeUpdates(), "12 moved past what the pull stored")
	require.Equal(t, int64(12), b.offsets[qa0])

	c, ok = s.BeginPullCommit(qa0)
	require.True(t, ok)
	s.EndPullCommit(c, CommitStored)
	require.NoError(t, s.Flush(ctx))
	require.Empty(t, b.takeUpdates(), "nothing changed since the pull stored it")
}

func TestPullCommitNotStoredOrUnknown(t *testing.T) {
	ctx := context.Background()
	b := newFakeBroker()
	s := NewRemoteStore("g", b)
	s.Update(qa0, 5, true)

	c, _ := s.BeginPullCommit(qa0)
	s.EndPullCommit(c, CommitNotStored)
	require.NoError(t, s.Flush(ctx))
	require.Equal(t, []message.Queue{qa0}, b.takeUpdates(), "refused: the update writes it")

	s.Update(qa0, 6, true)
	c, _ = s.BeginPullCommit(qa0)
	s.EndPullCommit(c, CommitUnknown)
	require.NoError(t, s.Flush(ctx))
	require.Empty(t, b.takeUpdates(), "the lost pull may still land: no update for a while")
	_, ok := s.BeginPullCommit(qa0)
	require.False(t, ok, "nor a pull carrying it")

	s.table.mu.Lock()
	s.table.entries[qa0].unsure = time.Time{}
	s.table.mu.Unlock()
	require.NoError(t, s.Flush(ctx))
	require.Equal(t, []message.Queue{qa0}, b.takeUpdates())
}

func TestNoPullCommitBesideAnUpdate(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := &blockingBroker{fakeBroker: newFakeBroker(), started: make(chan message.Queue, 1), release: make(chan struct{})}
	s := NewRemoteStore("g", b)
	s.Update(qa0, 7, true)
	done := make(chan error, 1)
	go func() { done <- s.Flush(context.Background()) }()
	<-b.started
	_, ok := s.BeginPullCommit(qa0)
	require.False(t, ok, "an update is in flight")
	close(b.release)
	require.NoError(t, <-done)
	s.Update(qa0, 8, true)
	_, ok = s.BeginPullCommit(qa0)
	require.True(t, ok, "the update was answered")
}

func TestPersistWaitsForThePullInFlight(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := newFakeBroker()
	s := NewRemoteStore("g", b)
	s.Update(qa0, 3, true)
	c, _ := s.BeginPullCommit(qa0)
	s.Update(qa0, 9, true)
	done := make(chan error, 1)
	go func() { done <- s.Persist(context.Background(), qa0) }()
	select {
	case err := <-done:
		t.Fatalf("Persist returned (%v) while the pull carrying 3 was unanswered", err)
	case <-time.After(50 * time.Millisecond):
	}
	require.Empty(t, b.takeUpdates())
	s.EndPullCommit(c, CommitStored)
	require.NoError(t, <-done)
	require.Equal(t, []message.Queue{qa0}, b.takeUpdates())
	require.Equal(t, int64(9), b.offsets[qa0], "written after the pull's 3")
}

func TestPersistWritesAnywayAfterTheWait(t *testing.T) {
	b := newFakeBroker()
	s := NewRemoteStore("g", b)
	s.table.maxWait = 20 * time.Millisecond
	s.Update(qa0, 3, true)
	c, _ := s.BeginPullCommit(qa0)
	start := time.Now()
	require.NoError(t, s.Persist(context.Background(), qa0))
	require.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
	require.Equal(t, int64(3), b.offsets[qa0])
	s.EndPullCommit(c, CommitStored) // late: harmless

	// A context that ends while it waits: nothing written, and the error says why.
	s.Update(qa0, 4, true)
	c, _ = s.BeginPullCommit(qa0)
	s.table.maxWait = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := s.Persist(ctx, qa0)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "waiting for the write in flight")
	s.EndPullCommit(c, CommitStored)
}

func TestEndPullCommitOfARemovedQueue(t *testing.T) {
	b := newFakeBroker()
	s := NewRemoteStore("g", b)
	s.Update(qa0, 3, true)
	c, _ := s.BeginPullCommit(qa0)
	s.Remove(qa0)
	s.Update(qa0, 1, false) // assigned again, from another offset
	s.EndPullCommit(c, CommitStored)
	_, ok := s.BeginPullCommit(qa0)
	require.True(t, ok, "the old claim does not hold the new entry")
	require.Equal(t, map[message.Queue]int64{qa0: 1}, s.Table())
}

func TestLocalStoreHasNoPullCommits(t *testing.T) {
	s, err := NewLocalStore(t.TempDir(), "c", "g")
	require.NoError(t, err)
	s.Update(qa0, 5, true)
	c, ok := s.BeginPullCommit(qa0)
	require.False(t, ok)
	s.EndPullCommit(c, CommitStored)
}

// dialErr is a transport error saying the connection could not be made.
type dialErr struct{}

func (dialErr) Error() string { return "dial tcp: connection refused" }
func (dialErr) Dialing() bool { return true }

func TestAnUpdateThatNeverLeftDoesNotKeepTheQueueBusy(t *testing.T) {
	ctx := context.Background()
	b := newFakeBroker()
	s := NewRemoteStore("g", b)
	s.Update(qa0, 5, true)
	b.updateErr["a"] = fmt.Errorf("client: update: %w", dialErr{})
	require.Error(t, s.Flush(ctx))
	delete(b.updateErr, "a")
	require.NoError(t, s.Flush(ctx))
	require.Equal(t, []message.Queue{qa0}, b.takeUpdates(), "retried at once: nothing of the first one reached the broker")
}
