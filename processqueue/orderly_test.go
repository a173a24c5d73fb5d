package processqueue

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestTake(t *testing.T) {
	for _, tc := range []struct {
		name      string
		put       []int64
		n         int
		want      []int64
		wantCache int
	}{
		{"fewer than cached", []int64{9, 3, 5, 1}, 2, []int64{1, 3}, 2},
		{"more than cached", []int64{4, 2}, 10, []int64{2, 4}, 0},
		{"empty cache", nil, 5, nil, 0},
		{"zero", []int64{1}, 0, nil, 1},
		{"negative", []int64{1}, -1, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pq := New(t0)
			pq.Put(msgsAt(tc.put...), -1)
			got := pq.Take(tc.n)
			if tc.want == nil {
				require.Empty(t, got)
			} else {
				require.Equal(t, tc.want, offsetsOf(got))
			}
			require.Equal(t, len(tc.want), pq.TakenCount())
			require.Equal(t, tc.wantCache, int(pq.Snapshot().CachedMsgCount))
			require.Equal(t, int64(len(tc.put)), pq.Count(), "taken messages still count")
			require.NotEqual(t, t0.UnixNano(), pq.LastConsumeTime().UnixNano(), "Take stamps the last consume time")
			at := t0.Add(time.Hour)
			pq.TakeAt(tc.n, at)
			require.True(t, pq.LastConsumeTime().Equal(at), "TakeAt stamps the time given")
		})
	}
}

func TestTakeEmptyClearsConsuming(t *testing.T) {
	// Java takeMessages sets consuming=false whenever it returns nothing, even when a
	// zero batch size was asked for.
	pq := New(t0)
	_, d := pq.Put(msgsAt(1), -1)
	require.True(t, d)
	require.Empty(t, pq.Take(0))
	_, d = pq.Put(nil, -1)
	require.True(t, d, "cache not empty and no task: dispatch again")
}

func TestCommit(t *testing.T) {
	pq := New(t0)
	off, ok := pq.Commit()
	require.False(t, ok, "nothing taken: no offset, never a made-up 1")
	require.Zero(t, off)

	pq.Put(msgsAt(span(0, 9)...), -1)
	pq.Take(3)
	off, ok = pq.Commit()
	require.True(t, ok)
	require.Equal(t, int64(3), off)
	require.Equal(t, int64(7), pq.Count())
	require.Equal(t, sizeOf(span(3, 9)...), pq.Size())
	require.Zero(t, pq.TakenCount())

	_, ok = pq.Commit()
	require.False(t, ok, "second commit has nothing to commit")

	// Gapped offsets: the last taken offset plus one.
	pq = New(t0)
	pq.Put(msgsAt(10, 20, 30), -1)
	pq.Take(2)
	off, ok = pq.Commit()
	require.True(t, ok)
	require.Equal(t, int64(21), off)
}

func TestCommitNeverPassesCachedMessages(t *testing.T) {
	// Put back only part of a batch, then commit: the offset stops at the message put
	// back (Java would return 13 and skip it).
	pq := New(t0)
	msgs := msgsAt(10, 11, 12)
	pq.Put(msgs, -1)
	pq.Take(3)
	pq.ConsumeAgain(msgs[1:2])
	off, ok := pq.Commit()
	require.True(t, ok)
	require.Equal(t, int64(11), off)
	require.Equal(t, int64(1), pq.Count())
	require.Equal(t, sizeOf(11), pq.Size())

	// A lower offset put after Take (e.g. after an offset reset) holds the offset too.
	pq = New(t0)
	pq.Put(msgsAt(20, 21), -1)
	pq.Take(2)
	pq.Put(msgsAt(5), -1)
	off, ok = pq.Commit()
	require.True(t, ok)
	require.Equal(t, int64(5), off)
}

func TestConsumeAgainAndRollback(t *testing.T) {
	pq := New(t0)
	msgs := msgsAt(span(0, 5)...)
	pq.Put(msgs, -1)
	require.Equal(t, []int64{0, 1, 2}, offsetsOf(pq.Take(3)))

	pq.ConsumeAgain(msgs[1:3])
	pq.ConsumeAgain(msgs[4:]) // not taken: skipped
	require.Equal(t, 1, pq.TakenCount())
	require.Equal(t, int64(6), pq.Count(), "moving messages does not change the count")
	require.Equal(t, sizeOf(span(0, 5)...), pq.Size())
	require.Equal(t, []int64{1, 2, 3}, offsetsOf(pq.Take(3)))
	require.Equal(t, 4, pq.TakenCount())

	pq.Rollback()
	require.Zero(t, pq.TakenCount())
	require.Equal(t, int64(6), pq.Count())
	require.Equal(t, span(0, 5), offsetsOf(pq.Take(10)))
	off, ok := pq.Commit()
	require.True(t, ok)
	require.Equal(t, int64(6), off)
	require.Zero(t, pq.Count())
	require.Zero(t, pq.Size())
}

func TestTakeUnlinksConsumeStart(t *testing.T) {
	pq := New(t0)
	msgs := msgsAt(1, 2, 3)
	pq.Put(msgs, -1)
	pq.MarkConsumeStart(msgs, t0)
	pq.Take(2)
	checkStartList(t, pq)
	require.Equal(t, []int64{3}, offsetsOf(pq.Expired(t0.Add(time.Hour), time.Second, 10)))
	pq.Rollback() // back in the cache, but no longer stamped
	checkStartList(t, pq)
	require.Equal(t, []int64{3}, offsetsOf(pq.Expired(t0.Add(time.Hour), time.Second, 10)))
}

func TestConsumeLock(t *testing.T) {
	defer goleak.VerifyNone(t)
	pq := New(t0)

	require.True(t, pq.TryLockConsume())
	require.False(t, pq.TryLockConsume(), "not reentrant")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := pq.LockConsume(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "consume lock")

	// A waiter gets the lock when the holder releases it.
	got := make(chan error, 1)
	go func() { got <- pq.LockConsume(context.Background()) }()
	pq.UnlockConsume()
	require.NoError(t, <-got)
	pq.UnlockConsume()

	// A free lock is taken even with an ended context.
	require.NoError(t, pq.LockConsume(ctx))
	pq.UnlockConsume()

	require.PanicsWithValue(t, "processqueue: UnlockConsume of an unlocked consume lock", pq.UnlockConsume)
}
