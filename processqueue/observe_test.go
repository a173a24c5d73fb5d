package processqueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPutStampsCachedAt(t *testing.T) {
	pq := New(t0)
	first := msgsAt(1, 2)
	before := time.Now()
	pq.Put(first, -1)
	for _, m := range first {
		require.False(t, m.CachedAt.Before(before), "stamped at Put")
	}
	stamp := first[0].CachedAt
	dup := msgsAt(1, 3)
	pq.Put(dup, -1)
	require.True(t, dup[0].CachedAt.IsZero(), "a repeat is not cached, so not stamped")
	require.False(t, dup[1].CachedAt.IsZero())
	require.Equal(t, stamp, first[0].CachedAt, "the cached copy keeps its time")
}

func TestOldestStoreTimestamp(t *testing.T) {
	pq := New(t0)
	_, ok := pq.OldestStoreTimestamp()
	require.False(t, ok, "empty")
	msgs := msgsAt(5, 6, 7)
	for i, m := range msgs {
		m.StoreTimestamp = int64(1000 + i)
	}
	pq.Put(msgs, -1)
	ts, ok := pq.OldestStoreTimestamp()
	require.True(t, ok)
	require.Equal(t, int64(1000), ts, "the smallest offset's")

	taken := pq.Take(1) // orderly: offset 5 is in a listener call, still unconsumed
	require.Len(t, taken, 1)
	ts, _ = pq.OldestStoreTimestamp()
	require.Equal(t, int64(1000), ts, "a taken message counts")
	pq.Commit()
	ts, _ = pq.OldestStoreTimestamp()
	require.Equal(t, int64(1001), ts, "committed: the next one")

	pq.Remove(msgs[1:])
	_, ok = pq.OldestStoreTimestamp()
	require.False(t, ok, "all consumed")
}
