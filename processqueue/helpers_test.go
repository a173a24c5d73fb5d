package processqueue

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
)

// t0 is an arbitrary fixed clock origin for tests.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// bodyLen is the body size the test messages get: different per offset, so size
// accounting errors show.
func bodyLen(off int64) int { return int(off%7) + 1 }

// msgsAt builds one message per offset, with bodyLen(off) body bytes.
func msgsAt(offs ...int64) []*message.Ext {
	out := make([]*message.Ext, len(offs))
	for i, off := range offs {
		out[i] = &message.Ext{
			Message:     message.Message{Topic: "T", Body: make([]byte, bodyLen(off))},
			BrokerName:  "b",
			QueueOffset: off,
		}
	}
	return out
}

// span returns the offsets from lo to hi inclusive.
func span(lo, hi int64) []int64 {
	var out []int64
	for o := lo; o <= hi; o++ {
		out = append(out, o)
	}
	return out
}

// offsetsOf returns the queue offsets of msgs.
func offsetsOf(msgs []*message.Ext) []int64 {
	out := make([]int64, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, m.QueueOffset)
	}
	return out
}

// sizeOf returns the body bytes of the messages at offs.
func sizeOf(offs ...int64) int64 {
	var n int64
	for _, o := range offs {
		n += int64(bodyLen(o))
	}
	return n
}

// checkStartList verifies the consume-start list: linked both ways, ordered by start,
// and holding exactly the stamped entries of the cache tree.
func checkStartList(t require.TestingT, pq *ProcessQueue) {
	pq.mu.RLock()
	defer pq.mu.RUnlock()
	onList := map[*entry]bool{}
	var prev *entry
	for e := pq.startHead; e != nil; e = e.next {
		require.True(t, e.started, "entry on the list not marked started")
		require.Same(t, prev, e.prev, "broken prev link")
		if prev != nil {
			require.LessOrEqual(t, prev.start, e.start, "list not ordered by start")
		}
		require.False(t, onList[e], "cycle in the list")
		onList[e] = true
		prev = e
	}
	require.Same(t, prev, pq.startTail, "tail is not the last entry")
	stamped := 0
	for _, e := range cachedEntries(pq) {
		if e.started {
			stamped++
			require.True(t, onList[e], "stamped cache entry %d not on the list", e.off)
		}
	}
	for i, it := range pq.taken.All() {
		require.False(t, it.e.started, "taken entry %d still on the list", it.off)
		require.True(t, i == 0 || pq.taken.All()[i-1].off < it.off, "taken set out of order at %d", it.off)
	}
	require.Equal(t, stamped, len(onList), "list holds entries that are not cached")
}

// cachedEntries returns the cache's entries in offset order, checking the segments'
// invariants on the way: ranges in order and apart, offsets strictly increasing, lo, hi
// and live right, no empty segment in the tree, the count right. The caller holds
// pq.mu.
func cachedEntries(pq *ProcessQueue) []*entry {
	var out []*entry
	lastOff := int64(-1 << 62)
	pq.cache.tree.Ascend(func(it segItem) bool {
		s := it.s
		if len(s.ents) == 0 || it.first != s.ents[0].off || it.first <= lastOff {
			panic(fmt.Sprintf("segment at %d: %d entries, overlaps or out of order (last range ended at %d)", it.first, len(s.ents), lastOff))
		}
		live, lo, hi := 0, -1, -1
		for i := range s.ents {
			e := &s.ents[i]
			if i > 0 && s.ents[i-1].off >= e.off {
				panic(fmt.Sprintf("segment at %d: offsets %d then %d", it.first, s.ents[i-1].off, e.off))
			}
			if e.cached {
				live++
				if lo < 0 {
					lo = i
				}
				hi = i + 1
				out = append(out, e)
			}
		}
		if live == 0 || live != s.live || lo != s.lo || hi != s.hi {
			panic(fmt.Sprintf("segment at %d: live/lo/hi %d/%d/%d, counted %d/%d/%d", it.first, s.live, s.lo, s.hi, live, lo, hi))
		}
		lastOff = s.last()
		return true
	})
	if len(out) != pq.cache.Len() {
		panic(fmt.Sprintf("cache holds %d entries, Len says %d", len(out), pq.cache.Len()))
	}
	return out
}

// checkLetGo verifies that no entry out of the cache keeps its message: every entry a
// segment of the cache tree or a taken entry's segment reaches (up to the capacity of
// its slice: the rest of its slab) is cached, taken, or holds no message. The caller
// holds pq.mu.
func checkLetGo(pq *ProcessQueue) {
	taken := map[*entry]bool{}
	var segs []*segment
	for _, it := range pq.taken.All() {
		taken[it.e] = true
		segs = append(segs, it.s)
	}
	pq.cache.tree.Ascend(func(it segItem) bool {
		segs = append(segs, it.s)
		return true
	})
	for _, s := range segs {
		for i, all := 0, s.ents[:cap(s.ents)]; i < len(all); i++ {
			if e := &all[i]; !e.cached && !taken[e] && e.msg != nil {
				panic(fmt.Sprintf("entry %d is out of the cache and keeps its message", e.off))
			}
		}
	}
}

func TestHelpers(t *testing.T) {
	require.Equal(t, []int64{3, 4, 5}, span(3, 5))
	require.Equal(t, []int64{3, 9}, offsetsOf(msgsAt(3, 9)))
	require.Equal(t, int64(bodyLen(3)+bodyLen(9)), sizeOf(3, 9))
}
