package processqueue

import (
	"cmp"
	"maps"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rmqpush/rmqpush/message"
)

// model is the reference the property test compares a ProcessQueue with: plain maps,
// written from Java's rules (plus rmqpush's two safety rules), and the caller's
// increase-only offset store.
type model struct {
	cached    map[int64]*message.Ext // in the cache tree
	taken     map[int64]*message.Ext // taken by an orderly listener
	maxSeen   int64                  // highest offset put since New or Clear
	consuming bool

	// store is the caller's offset store, updated increase-only with every
	// non-negative offset Remove or Commit returns; -1 before the first.
	store int64
	// storeAtPut is the store's value when each pending offset was put. A message put
	// at an offset the store had already passed (a re-pull after an offset reset) can't
	// be protected; any other must never be passed.
	storeAtPut map[int64]int64

	// Consume-start stamps of cached messages: time and marking sequence.
	startAt  map[int64]int64
	startSeq map[int64]int
	seq      int
}

func newModel() *model {
	return &model{
		cached: map[int64]*message.Ext{}, taken: map[int64]*message.Ext{},
		store: -1, storeAtPut: map[int64]int64{},
		startAt: map[int64]int64{}, startSeq: map[int64]int{},
	}
}

func (m *model) pending(off int64) bool {
	_, c := m.cached[off]
	_, tk := m.taken[off]
	return c || tk
}

func (m *model) minKey(set map[int64]*message.Ext) (int64, bool) {
	if len(set) == 0 {
		return 0, false
	}
	return slices.Min(slices.Collect(maps.Keys(set))), true
}

func (m *model) forget(off int64) {
	delete(m.cached, off)
	delete(m.taken, off)
	delete(m.storeAtPut, off)
	delete(m.startAt, off)
	delete(m.startSeq, off)
}

func (m *model) count() (n, size int64) {
	for _, set := range []map[int64]*message.Ext{m.cached, m.taken} {
		for _, msg := range set {
			n++
			size += int64(len(msg.Body))
		}
	}
	return n, size
}

// apply stores a returned offset increase-only and checks it against every pending
// message: the offset handed to the store never passes one.
func (m *model) apply(t *rapid.T, op string, off int64) {
	for _, set := range []map[int64]*message.Ext{m.cached, m.taken} {
		for p := range set {
			if off > p {
				t.Fatalf("%s returned %d, past pending message %d", op, off, p)
			}
		}
	}
	if off > m.store {
		m.store = off
	}
}

func TestPropertyMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pq := New(t0)
		m := newModel()
		clock := int64(0) // seconds after t0

		// pickPending draws a subset of the given offsets plus some that are not there.
		pickSome := func(t *rapid.T, from map[int64]*message.Ext, label string) []int64 {
			keys := slices.Sorted(maps.Keys(from))
			var out []int64
			for _, k := range keys {
				if rapid.Bool().Draw(t, label+"_pick") {
					out = append(out, k)
				}
			}
			extra := rapid.SliceOfN(rapid.Int64Range(0, 300), 0, 3).Draw(t, label+"_extra")
			out = append(out, extra...)
			return rapid.Permutation(out).Draw(t, label+"_order")
		}

		t.Repeat(map[string]func(*rapid.T){
			"Put": func(t *rapid.T) {
				lo := rapid.Int64Range(0, 250).Draw(t, "lo")
				n := rapid.IntRange(0, 40).Draw(t, "n")
				offs := make([]int64, 0, n+4)
				for o := lo; o < lo+int64(n); o++ {
					offs = append(offs, o)
				}
				// Gaps (a broker's tag filter leaves them), duplicates inside the batch,
				// and a shuffle now and then.
				if rapid.Bool().Draw(t, "gaps") {
					offs = slices.DeleteFunc(offs, func(int64) bool { return rapid.Bool().Draw(t, "gap") })
				}
				if rapid.Bool().Draw(t, "dupsAndShuffle") {
					offs = append(offs, rapid.SliceOfN(rapid.Int64Range(lo, lo+int64(n)), 0, 4).Draw(t, "dups")...)
					offs = rapid.Permutation(offs).Draw(t, "perm")
				}
				msgs := msgsAt(offs...)
				maxOff := rapid.Int64Range(-1, 400).Draw(t, "maxOffset")

				var want []int64
				for _, msg := range msgs {
					if m.pending(msg.QueueOffset) {
						continue
					}
					m.cached[msg.QueueOffset] = msg
					m.storeAtPut[msg.QueueOffset] = m.store
					m.maxSeen = max(m.maxSeen, msg.QueueOffset)
					want = append(want, msg.QueueOffset)
				}
				wantDispatch := len(m.cached) > 0 && !m.consuming
				if wantDispatch {
					m.consuming = true
				}

				added, dispatch := pq.Put(msgs, maxOff)
				if got := offsetsOf(added); !slices.Equal(got, want) {
					t.Fatalf("Put added %v, want %v", got, want)
				}
				if dispatch != wantDispatch {
					t.Fatalf("Put dispatch %v, want %v", dispatch, wantDispatch)
				}
			},
			"Remove": func(t *rapid.T) {
				offs := pickSome(t, m.cached, "remove")
				want := int64(-1)
				if len(m.cached) > 0 {
					want = m.maxSeen + 1
					for _, o := range offs {
						if _, ok := m.cached[o]; ok {
							m.forget(o)
						}
					}
					if k, ok := m.minKey(m.cached); ok {
						want = k
					}
					if k, ok := m.minKey(m.taken); ok && k < want {
						want = k
					}
				}
				got := pq.Remove(msgsAt(offs...))
				if got != want {
					t.Fatalf("Remove(%v) = %d, want %d", offs, got, want)
				}
				if got >= 0 {
					m.apply(t, "Remove", got)
				}
			},
			"Take": func(t *rapid.T) {
				n := rapid.IntRange(0, 10).Draw(t, "n")
				keys := slices.Sorted(maps.Keys(m.cached))
				want := keys[:min(n, len(keys))]
				for _, k := range want {
					m.taken[k] = m.cached[k]
					delete(m.cached, k)
					delete(m.startAt, k)
					delete(m.startSeq, k)
				}
				if len(want) == 0 {
					m.consuming = false
				}
				if got := offsetsOf(pq.Take(n)); !slices.Equal(got, want) {
					t.Fatalf("Take(%d) = %v, want %v", n, got, want)
				}
			},
			"Commit": func(t *rapid.T) {
				off, ok := pq.Commit()
				if len(m.taken) == 0 {
					if ok {
						t.Fatalf("Commit with nothing taken returned %d", off)
					}
					return
				}
				want := slices.Max(slices.Collect(maps.Keys(m.taken))) + 1
				if k, ok := m.minKey(m.cached); ok && k < want {
					want = k
				}
				for k := range m.taken {
					m.forget(k)
				}
				if !ok || off != want {
					t.Fatalf("Commit = %d, %v; want %d", off, ok, want)
				}
				m.apply(t, "Commit", off)
			},
			"ConsumeAgain": func(t *rapid.T) {
				offs := pickSome(t, m.taken, "again")
				for _, o := range offs {
					if msg, ok := m.taken[o]; ok {
						m.cached[o] = msg
						delete(m.taken, o)
					}
				}
				pq.ConsumeAgain(msgsAt(offs...))
			},
			"Rollback": func(t *rapid.T) {
				for k, msg := range m.taken {
					m.cached[k] = msg
				}
				clear(m.taken)
				pq.Rollback()
			},
			"MarkConsumeStart": func(t *rapid.T) {
				offs := pickSome(t, m.cached, "mark")
				// Mostly forward, sometimes a little back (callers' clocks race).
				clock += rapid.Int64Range(-3, 10).Draw(t, "tick")
				for _, o := range offs {
					if _, ok := m.cached[o]; ok {
						m.startAt[o] = clock
						m.seq++
						m.startSeq[o] = m.seq
					}
				}
				pq.MarkConsumeStart(msgsAt(offs...), t0.Add(time.Duration(clock)*time.Second))
			},
			"Expired": func(t *rapid.T) {
				timeout := rapid.Int64Range(0, 20).Draw(t, "timeout")
				limit := rapid.IntRange(0, 8).Draw(t, "limit")
				now := clock + rapid.Int64Range(-5, 20).Draw(t, "ahead")
				var cand []int64
				for o, at := range m.startAt {
					if now-at > timeout {
						cand = append(cand, o)
					}
				}
				slices.SortFunc(cand, func(a, b int64) int {
					if c := cmp.Compare(m.startAt[a], m.startAt[b]); c != 0 {
						return c
					}
					return cmp.Compare(m.startSeq[a], m.startSeq[b])
				})
				want := cand[:min(max(limit, 0), len(cand))]
				slices.Sort(want)
				got := offsetsOf(pq.Expired(t0.Add(time.Duration(now)*time.Second), time.Duration(timeout)*time.Second, limit))
				if len(want) == 0 {
					want = []int64{}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("Expired(now=%d, timeout=%d, limit=%d) = %v, want %v", now, timeout, limit, got, want)
				}
			},
			"Clear": func(t *rapid.T) {
				if rapid.IntRange(0, 9).Draw(t, "rare") != 0 {
					t.Skip("Clear is rare")
				}
				for k := range m.cached {
					m.forget(k)
				}
				for k := range m.taken {
					m.forget(k)
				}
				m.maxSeen = 0
				pq.Clear()
			},
			"": func(t *rapid.T) {
				n, size := m.count()
				if pq.Count() != n || pq.Size() != size {
					t.Fatalf("count/size = %d/%d, want %d/%d", pq.Count(), pq.Size(), n, size)
				}
				if got := pq.TakenCount(); got != len(m.taken) {
					t.Fatalf("TakenCount = %d, want %d", got, len(m.taken))
				}
				wantSpan := int64(0)
				if len(m.cached) > 0 {
					keys := slices.Collect(maps.Keys(m.cached))
					wantSpan = slices.Max(keys) - slices.Min(keys)
				}
				if got := pq.MaxSpan(); got != wantSpan {
					t.Fatalf("MaxSpan = %d, want %d", got, wantSpan)
				}
				// The store never passes a pending message it had not passed already
				// when that message was put.
				for _, set := range []map[int64]*message.Ext{m.cached, m.taken} {
					for p := range set {
						if m.store > max(p, m.storeAtPut[p]) {
							t.Fatalf("store %d passed pending message %d (store was %d at its put)", m.store, p, m.storeAtPut[p])
						}
					}
				}
				checkStartList(t, pq)
				pq.mu.RLock()
				cached := cachedEntries(pq)
				checkLetGo(pq)
				pq.mu.RUnlock()
				if len(cached) != len(m.cached) {
					t.Fatalf("%d entries cached, want %d", len(cached), len(m.cached))
				}
				for _, e := range cached {
					if m.cached[e.off] != e.msg {
						t.Fatalf("entry %d caches %p, want %p", e.off, e.msg, m.cached[e.off])
					}
				}
			},
		})
	})
}
