package fakebroker

import (
	"slices"
	"strings"

	"github.com/rmqpush/rmqpush/internal/protocol"
)

// jprops is a message's properties as the broker holds them: a java.util.HashMap built
// by MessageDecoder.string2messageProperties and written back by
// messageProperties2String. The broker re-writes the properties of every message it
// stores this way, so stored properties come in HashMap iteration order, whatever order
// the producer sent them in; emulating that order makes our records byte-identical to a
// real broker's (golden b_consume_retry shows the order of a retried message).
//
// HashMap iteration visits buckets in index order and, within a bucket, entries in the
// order they were first inserted; resizing keeps that relative order. So the order
// depends only on each key's hash, the final table size and the insertion order.
type jprops struct {
	keys, vals []string // insertion order; keys are unique
	maxLen     int      // the largest size the map reached (HashMap never shrinks)
	minSize    uint32   // the table size the map was created with (0: Java's default, 16)
	trailing   bool     // String ends every pair with 0x02, as 5.x writes properties
	kb, vb     [16]string
}

func newJProps() *jprops {
	p := &jprops{}
	p.keys, p.vals = p.kb[:0], p.vb[:0]
	return p
}

// parseJProps reads a properties string as Java's string2messageProperties does:
// pairs split on 0x02, a pair on its first 0x01, and pairs shorter than 3 characters or
// with an empty name or value skipped. A repeated name keeps its first position and takes
// the last value.
func parseJProps(s string) *jprops {
	p := newJProps()
	for len(s) > 0 {
		seg, rest, _ := strings.Cut(s, "\x02")
		s = rest
		if len(seg) < 3 {
			continue
		}
		k, v, ok := strings.Cut(seg, "\x01")
		if !ok || k == "" || v == "" {
			continue
		}
		p.put(k, v)
	}
	return p
}

// parseJProps5 reads a properties string as 5.3.3's string2messageProperties does: into
// a HashMap created with 128 buckets, written back with a 0x02 after every pair (golden
// p_pop_533's re-encoded retry record).
func parseJProps5(s string) *jprops {
	p := parseJProps(s)
	p.minSize, p.trailing = 128, true
	return p
}

// copyJProps5 is 5.x's new HashMap (default size) filled with putAll from src, written
// with a 0x02 after every pair: what PopReviveService builds a revived message's
// properties in. TAGS, set first by setTags, keeps the first place.
func copyJProps5(src *jprops) *jprops {
	p := newJProps()
	p.trailing = true
	if v, ok := src.get("TAGS"); ok {
		p.put("TAGS", v)
	}
	var small [16]int
	for _, i := range src.order(small[:0]) {
		p.put(src.keys[i], src.vals[i])
	}
	return p
}

func (p *jprops) get(k string) (string, bool) {
	if i := slices.Index(p.keys, k); i >= 0 {
		return p.vals[i], true
	}
	return "", false
}

func (p *jprops) put(k, v string) {
	if i := slices.Index(p.keys, k); i >= 0 {
		p.vals[i] = v
		return
	}
	p.keys = append(p.keys, k)
	p.vals = append(p.vals, v)
	p.maxLen = max(p.maxLen, len(p.keys))
}

func (p *jprops) del(k string) {
	if i := slices.Index(p.keys, k); i >= 0 {
		p.keys = slices.Delete(p.keys, i, i+1)
		p.vals = slices.Delete(p.vals, i, i+1)
	}
}

// tableSize is the HashMap's capacity after holding n entries at most: 16, doubled while
// n exceeds 3/4 of it.
func tableSize(n int) uint32 {
	size := uint32(16)
	for n > int(size/4*3) && size < 1<<30 {
		size *= 2
	}
	return size
}

// bucket is HashMap's bucket index of key k in a table of the given size.
func bucket(k string, size uint32) uint32 {
	h := uint32(protocol.JavaStringHash(k))
	h ^= h >> 16
	return h & (size - 1)
}

// order writes the indexes of p's entries, in HashMap iteration order, to idx (which
// must have room for them) and returns it: a stable insertion sort by bucket index.
func (p *jprops) order(idx []int) []int {
	size := max(tableSize(p.maxLen), p.minSize)
	var small [16]uint32
	buckets := small[:0]
	if len(p.keys) > len(small) {
		buckets = make([]uint32, 0, len(p.keys))
	}
	idx = idx[:0]
	for i, k := range p.keys {
		bk := bucket(k, size)
		buckets = append(buckets, bk)
		j := len(idx)
		idx = append(idx, i)
		for j > 0 && buckets[idx[j-1]] > bk {
			idx[j] = idx[j-1]
			j--
		}
		idx[j] = i
	}
	return idx
}

// String returns the properties as messageProperties2String writes them: name 0x01 value,
// pairs separated by 0x02 (followed by one with trailing, as 5.x writes them), in
// HashMap order.
func (p *jprops) String() string {
	if len(p.keys) == 0 {
		return ""
	}
	n := 0
	for i := range p.keys {
		n += len(p.keys[i]) + len(p.vals[i]) + 2
	}
	var b strings.Builder
	b.Grow(n)
	var small [16]int
	idx := small[:0]
	if len(p.keys) > len(small) {
		idx = make([]int, 0, len(p.keys))
	}
	for j, i := range p.order(idx) {
		if j > 0 {
			b.WriteByte('\x02')
		}
		b.WriteString(p.keys[i])
		b.WriteByte('\x01')
		b.WriteString(p.vals[i])
	}
	if p.trailing {
		b.WriteByte('\x02')
	}
	return b.String()
}
