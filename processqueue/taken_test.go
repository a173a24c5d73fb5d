package processqueue

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func takenOffsets(t *takenSet) []int64 {
	var offs []int64
	for _, it := range t.All() {
		offs = append(offs, it.off)
	}
	return offs
}

// The taken set stays in offset order whatever the order of inserts, replaces an item
// at the same offset, finds and deletes by offset, and keeps its memory, zeroed, when
// cleared.
func TestTakenSet(t *testing.T) {
	var s takenSet
	_, ok := s.Min()
	require.False(t, ok)
	_, ok = s.Max()
	require.False(t, ok)
	_, ok = s.Delete(1)
	require.False(t, ok)

	e := &entry{off: 5}
	for _, off := range []int64{5, 6, 9, 2, 7} {
		s.ReplaceOrInsert(item{off: off})
	}
	s.ReplaceOrInsert(item{off: 5, e: e})
	require.Equal(t, []int64{2, 5, 6, 7, 9}, takenOffsets(&s))
	require.Same(t, e, s.All()[1].e, "replaced")
	require.True(t, s.Has(7))
	require.False(t, s.Has(8))
	require.False(t, s.Has(10))

	it, ok := s.Delete(5)
	require.True(t, ok)
	require.Same(t, e, it.e)
	_, ok = s.Delete(5)
	require.False(t, ok)
	require.Equal(t, []int64{2, 6, 7, 9}, takenOffsets(&s))
	require.Nil(t, s.items[:5][4].e, "the vacated slot is zeroed")
	first, _ := s.Min()
	last, _ := s.Max()
	require.Equal(t, int64(2), first.off)
	require.Equal(t, int64(9), last.off)

	s.items[0].e = e
	s.Clear()
	require.Zero(t, s.Len())
	require.Nil(t, s.items[:1][0].e, "cleared for the collector")
	require.Positive(t, cap(s.items), "memory kept")
}
