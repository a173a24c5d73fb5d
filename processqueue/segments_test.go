package processqueue

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// segments returns the first offset of every segment in the cache tree.
func segments(pq *ProcessQueue) []int64 {
	pq.mu.RLock()
	defer pq.mu.RUnlock()
	cachedEntries(pq) // checks the invariants
	checkLetGo(pq)
	var out []int64
	pq.cache.tree.Ascend(func(it segItem) bool {
		out = append(out, it.first)
		return true
	})
	return out
}

func TestPullsInOrderAreOneSegmentEach(t *testing.T) {
	pq := New(t0)
	pq.Put(msgsAt(span(0, 31)...), -1)
	pq.Put(msgsAt(40, 42, 45), -1) // gaps: a tag filter's
	pq.Put(msgsAt(span(46, 77)...), -1)
	require.Equal(t, []int64{0, 40, 46}, segments(pq))

	// Removing in the middle of a segment keeps it; its last entry takes it out.
	pq.Remove(msgsAt(42))
	require.Equal(t, []int64{0, 40, 46}, segments(pq))
	pq.Remove(msgsAt(40, 45))
	require.Equal(t, []int64{0, 46}, segments(pq))
	require.Equal(t, int64(64), pq.Count())
}

func TestPutIntoASegmentsRangeSplitsIt(t *testing.T) {
	pq := New(t0)
	pq.Put(msgsAt(10, 12, 14, 16), -1)
	added, _ := pq.Put(msgsAt(13, 14, 9), -1) // 14 is cached: a duplicate
	require.Equal(t, []int64{13, 9}, offsetsOf(added))
	require.Equal(t, []int64{9, 10, 13, 14}, segments(pq))

	// A message put again at an offset that left the cache takes its place.
	pq.Remove(msgsAt(16))
	pq.Put(msgsAt(11), -1)
	pq.Remove(msgsAt(12))
	added, _ = pq.Put(msgsAt(12), -1)
	require.Equal(t, []int64{12}, offsetsOf(added))
	require.Equal(t, []int64{9, 10, 11, 12, 13, 14}, segments(pq))
	require.Equal(t, int64(9), pq.Remove(nil))
}

func TestTakenEntriesGoBackInPlace(t *testing.T) {
	pq := New(t0)
	pq.Put(msgsAt(span(0, 7)...), -1)
	taken := pq.Take(3)
	require.Equal(t, []int64{0}, segments(pq))
	pq.ConsumeAgain(taken[1:2])
	require.Equal(t, []int64{0}, segments(pq)) // offset 1 back in its own segment
	require.Equal(t, int64(1), pq.Snapshot().CachedMsgMinOffset)

	// When the segment left the tree, it goes back into it.
	pq.Take(10)
	require.Empty(t, segments(pq))
	pq.Rollback()
	require.Equal(t, []int64{0}, segments(pq))
	require.Equal(t, int64(8), pq.Count())
	require.Equal(t, span(0, 7), offsetsOf(pq.Take(10)))
}

func TestTakenEntriesGoBackAsCopiesWhenTheirRangeWasTaken(t *testing.T) {
	pq := New(t0)
	pq.Put(msgsAt(0, 2, 4, 6), -1) // gaps: a tag filter's
	taken := pq.Take(10)
	pq.Put(msgsAt(3), -1) // in the taken segment's range
	pq.ConsumeAgain(taken)
	require.Equal(t, []int64{0, 2, 3, 4, 6}, segments(pq))
	require.Equal(t, int64(5), pq.Count())
	require.Equal(t, []int64{0, 2, 3, 4, 6}, offsetsOf(pq.Take(10)))
}

// A message put again at an offset whose entry left the cache takes that entry's
// place: a re-pull costs no split and no segment.
func TestPutAgainReusesTheEntrysPlace(t *testing.T) {
	pq := New(t0)
	msgs := msgsAt(span(0, 31)...)
	pq.Put(msgs, -1)
	pq.Remove(msgs[:31])
	added, _ := pq.Put(msgsAt(span(0, 31)...), -1) // 31 is still cached
	require.Equal(t, span(0, 30), offsetsOf(added))
	require.Equal(t, []int64{0}, segments(pq))
	require.Equal(t, int64(32), pq.Count())
	require.Equal(t, int64(0), pq.Remove(added[1:]))
	require.Equal(t, int64(31), pq.Remove(added[:1]))
	require.Equal(t, int64(32), pq.Remove(msgs[31:]))
	require.Empty(t, segments(pq))
}

// A segment stays in the tree while any of its messages is cached; the messages that
// were consumed or committed must not stay reachable through it.
func TestSegmentsLetConsumedMessagesGo(t *testing.T) {
	pq := New(t0)
	msgs := msgsAt(span(0, 31)...)
	pq.Put(msgs, -1)
	pq.Remove(msgs[:30])
	require.Len(t, pq.Take(1), 1) // offset 30
	pq.Commit()
	require.Equal(t, []int64{0}, segments(pq)) // offset 31 keeps the segment

	pq.mu.RLock()
	defer pq.mu.RUnlock()
	it, _ := pq.cache.tree.Min()
	for _, e := range it.s.ents[:31] {
		require.Nil(t, e.msg, "offset %d left the cache but its message is kept", e.off)
	}
}

// A re-pull that overlaps the cached or taken tail: its new messages are one segment.
func TestARepullsNewMessagesAreOneSegment(t *testing.T) {
	pq := New(t0)
	pq.Put(msgsAt(span(0, 31)...), -1)
	added, _ := pq.Put(msgsAt(span(16, 63)...), -1)
	require.Equal(t, span(32, 63), offsetsOf(added))
	require.Equal(t, []int64{0, 32}, segments(pq))

	require.Len(t, pq.Take(64), 64)
	added, _ = pq.Put(msgsAt(span(48, 95)...), -1)
	require.Equal(t, span(64, 95), offsetsOf(added))
	require.Equal(t, []int64{64}, segments(pq))

	// Out of order before the tail: one at a time, and the tail checked again.
	added, _ = pq.Put(msgsAt(97, 96, 98, 99), -1)
	require.Equal(t, []int64{97, 96, 98, 99}, offsetsOf(added))
	require.Equal(t, []int64{64, 96, 97, 98, 99}, segments(pq))
	added, _ = pq.Put(msgsAt(200, 150, 151), -1)
	require.Equal(t, []int64{200, 150, 151}, offsetsOf(added))
	require.Equal(t, []int64{64, 96, 97, 98, 99, 150, 200}, segments(pq))
}

// Duplicates, put-back copies and re-put places let their messages go.
func TestEntriesOutOfTheCacheLetGo(t *testing.T) {
	pq := New(t0)
	pq.Put(msgsAt(5), -1)
	pq.Put(msgsAt(5, 4), -1) // 5 is a duplicate in the second slab
	segments(pq)
	pq.Remove(msgsAt(4))
	pq.Put(msgsAt(10, 12, 14), -1)
	pq.Remove(msgsAt(12))
	pq.Put(msgsAt(12, 3), -1) // 12 takes its old place
	segments(pq)

	taken := pq.Take(10)
	pq.Put(msgsAt(11), -1) // in the taken segments' ranges: they come back as copies
	pq.ConsumeAgain(taken)
	segments(pq)
	require.Equal(t, []int64{3, 5, 10, 11, 12, 14}, offsetsOf(pq.Take(10)))
}

// TestEntrySize: a pull's 32 entries (the default batch) fit the allocator's 1,792-byte
// size class; 8 bytes more per entry and they take the 2,048-byte one.
func TestEntrySize(t *testing.T) {
	require.Equal(t, uintptr(48), unsafe.Sizeof(entry{}))
}
