package processqueue

import (
	"sort"

	"github.com/google/btree"
)

// The cache tree holds runs of entries, not single entries.
//
// A pull's messages arrive in offset order and, under load, leave the cache in about
// that order, one listener call at a time. A tree keyed by message paid a node insert
// per message on Put and a node delete per message on Remove: a shift of up to 31
// pointer-holding items, each with GC write barriers while a collection runs (a tenth
// of the consumer's CPU in the realistic benchmark's profile). Here a Put is one run
// (a segment) and one tree insert; a message leaving the cache clears its entry's
// cached flag, and the tree changes only when a segment's last cached entry leaves. The
// map is still an ordered tree keyed by queue offset: by each run's first offset.

// segment is a run of entries put together: ents is sorted by offset with no two
// alike, and its memory never moves, so a cached entry's address is stable (the
// consume-start list and the taken set hold entry pointers). An entry in ents is in
// the cache while its cached flag is set; a segment is in the tree while it has one.
type segment struct {
	ents []entry
	// lo and hi bound the cached entries: ents[lo] and ents[hi-1] are cached.
	lo, hi int
	live   int // cached entries
}

func (s *segment) last() int64 { return s.ents[len(s.ents)-1].off }

// index returns the position of the first entry whose offset is at least off.
func (s *segment) index(off int64) int {
	if k := off - s.ents[0].off; k >= 0 && k < int64(len(s.ents)) && s.ents[k].off == off {
		return int(k) // offsets without gaps: no search
	}
	return sort.Search(len(s.ents), func(i int) bool { return s.ents[i].off >= off })
}

// count recomputes lo, hi and live from the cached flags.
func (s *segment) count() {
	s.lo, s.hi, s.live = len(s.ents), 0, 0
	for i := range s.ents {
		if s.ents[i].cached {
			s.lo, s.hi = min(s.lo, i), i+1
			s.live++
		}
	}
}

// segItem is what the cache tree holds: a segment keyed by its first offset, which
// never changes (a segment's entries stay in ents after they leave the cache).
type segItem struct {
	first int64
	s     *segment
}

func lessSeg(a, b segItem) bool { return a.first < b.first }

// cacheMap is the cache: entries by queue offset, in segments whose offset ranges
// (first to last entry, cached or not) never overlap. The caller holds pq.mu.
type cacheMap struct {
	tree *btree.BTreeG[segItem]
	n    int // cached entries
}

func newCacheMap() cacheMap {
	return cacheMap{tree: btree.NewWithFreeListG(btreeDegree, lessSeg, btree.NewFreeListG[segItem](segFreeNodes))}
}

// segFreeNodes is the free list of a cache tree: a queue's cache holds a few dozen
// segments, one or two nodes.
const segFreeNodes = 4

// Len returns the number of cached entries.
func (c *cacheMap) Len() int { return c.n }

// find returns the segment whose offset range covers off and the position in it of
// the first entry at or after off, or nil.
func (c *cacheMap) find(off int64) (*segment, int) {
	it, ok := c.tree.Min() // under load, the entry wanted is usually in the first run
	if !ok {
		return nil, 0
	}
	if off > it.s.last() {
		it = segItem{}
		c.tree.DescendLessOrEqual(segItem{first: off}, func(cand segItem) bool {
			it = cand
			return false
		})
	}
	if it.s == nil || off < it.first || off > it.s.last() {
		return nil, 0
	}
	return it.s, it.s.index(off)
}

// Get returns the cached entry at offset off, or nil.
func (c *cacheMap) Get(off int64) *entry {
	if s, k := c.find(off); s != nil && s.ents[k].off == off && s.ents[k].cached {
		return &s.ents[k]
	}
	return nil
}

// Delete takes the entry at offset off out of the cache and returns it, or nil when
// none is cached there. The entry keeps its fields.
func (c *cacheMap) Delete(off int64) *entry {
	s, k := c.find(off)
	if s == nil || s.ents[k].off != off || !s.ents[k].cached {
		return nil
	}
	c.drop(s, k)
	return &s.ents[k]
}

// drop clears the cached flag of s.ents[k], which is set.
func (c *cacheMap) drop(s *segment, k int) {
	s.ents[k].cached = false
	s.live--
	c.n--
	if s.live == 0 {
		c.tree.Delete(segItem{first: s.ents[0].off})
		return
	}
	for !s.ents[s.lo].cached {
		s.lo++
	}
	for !s.ents[s.hi-1].cached {
		s.hi--
	}
}

// Min returns the cached entry with the lowest offset, or nil.
func (c *cacheMap) Min() *entry {
	if it, ok := c.tree.Min(); ok {
		return &it.s.ents[it.s.lo]
	}
	return nil
}

// Max returns the cached entry with the highest offset, or nil.
func (c *cacheMap) Max() *entry {
	if it, ok := c.tree.Max(); ok {
		return &it.s.ents[it.s.hi-1]
	}
	return nil
}

// DeleteMin takes the entry with the lowest offset out of the cache and returns it
// with its segment, or nil when the cache is empty.
func (c *cacheMap) DeleteMin() (*entry, *segment) {
	it, ok := c.tree.Min()
	if !ok {
		return nil, nil
	}
	k := it.s.lo
	c.drop(it.s, k)
	return &it.s.ents[k], it.s
}

// Clear empties the cache.
func (c *cacheMap) Clear() {
	c.tree.Clear(false)
	c.n = 0
}

// fits reports whether ents, sorted and strictly increasing, can be one new segment:
// no segment's range overlaps theirs.
func (c *cacheMap) fits(ents []entry) bool {
	return len(ents) > 0 && c.fitsRange(ents[0].off, ents[len(ents)-1].off)
}

// fitsRange reports whether no segment's range overlaps lo to hi.
func (c *cacheMap) fitsRange(lo, hi int64) bool {
	if it, ok := c.tree.Max(); !ok || it.s.last() < lo {
		return true // the usual case: after everything cached
	}
	if s, _ := c.find(lo); s != nil {
		return false
	}
	clear := true
	c.tree.AscendGreaterOrEqual(segItem{first: lo}, func(it segItem) bool {
		clear = it.first > hi
		return false
	})
	return clear
}

// AddRun caches ents, which fits accepted, as one segment.
func (c *cacheMap) AddRun(ents []entry) {
	for i := range ents {
		ents[i].cached = true
	}
	s := &segment{ents: ents, lo: 0, hi: len(ents), live: len(ents)}
	c.tree.ReplaceOrInsert(segItem{first: ents[0].off, s: s})
	c.n += len(ents)
}

// Add caches the entry one[0] and reports true, or reports false when an entry is
// already cached at its offset. No taken entry may have its offset. When a segment
// holds an entry at that offset that left the cache, one's fields take its place;
// a segment whose range covers the offset otherwise is split around it.
func (c *cacheMap) Add(one []entry) bool {
	off := one[0].off
	if s, k := c.find(off); s != nil {
		if s.ents[k].off == off {
			if s.ents[k].cached {
				return false
			}
			s.ents[k] = one[0] // a message put again: no split, no new segment
			one[0].msg = nil   // one's memory is not the cache's now
			c.cache(s, k)
			return true
		}
		c.tree.Delete(segItem{first: s.ents[0].off})
		c.n -= s.live
		c.addPiece(s.ents[:k])
		c.addPiece(s.ents[k:])
	}
	c.AddRun(one)
	return true
}

// cache sets the cached flag of s.ents[k], which is clear; s is in the tree.
func (c *cacheMap) cache(s *segment, k int) {
	s.ents[k].cached = true
	s.live++
	c.n++
	s.lo, s.hi = min(s.lo, k), max(s.hi, k+1)
}

// Readd puts e, an entry of segment home that left the cache (Take), back into it: in
// place when home is in the tree or can go back (nothing has taken its range since),
// else as a copy. It reports false, adding nothing, when another entry is cached at
// e's offset. Either way e's own message is let go unless e is cached again.
//
// When no segment covers e's offset and home's range is clear, every entry of home is
// out of the cache: a cached entry's segment, or a piece of it sharing its memory, is
// in the tree and covers it. (Clear drops segments whose entries keep their cached
// flags; it empties the taken set too, so none of them comes back here as a home.)
func (c *cacheMap) Readd(e *entry, home *segment) bool {
	s, k := c.find(e.off)
	if s == nil && c.fitsRange(home.ents[0].off, home.last()) {
		s, k = home, home.index(e.off)
		s.lo, s.hi, s.live = k, k+1, 0
		c.tree.ReplaceOrInsert(segItem{first: s.ents[0].off, s: s})
	}
	if s != nil && &s.ents[k] == e {
		c.cache(s, k)
		return true
	}
	cp := *e
	e.msg = nil
	return c.Add([]entry{cp})
}

// addPiece puts a part of a split segment back into the tree if any of it is cached.
func (c *cacheMap) addPiece(ents []entry) {
	if len(ents) == 0 {
		return
	}
	s := &segment{ents: ents}
	s.count()
	if s.live > 0 {
		c.tree.ReplaceOrInsert(segItem{first: ents[0].off, s: s})
		c.n += s.live
	}
}
