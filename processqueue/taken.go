package processqueue

import "slices"

// takenSet holds the messages Take handed to an orderly listener and not yet committed
// or put back (Java consumingMsgOrderlyTreeMap), in offset order. It is a sorted slice,
// not a tree: it holds one listener call's batch at a time (1 message by default, at
// most ConsumeMessageBatchMaxSize), taken in increasing offset order, so an insert is
// nearly always an append, and emptying it keeps its memory for the next batch. (A tree
// cost every orderly call a node from its free list and back, under the list's lock.)
// The zero value is empty and ready to use; the ProcessQueue's lock guards it.
type takenSet struct {
	items []item
}

// Len returns the number of taken messages.
func (t *takenSet) Len() int { return len(t.items) }

// find returns where off is or would be.
func (t *takenSet) find(off int64) (int, bool) {
	if n := len(t.items); n == 0 || t.items[n-1].off < off {
		return n, false // after everything: the usual case
	}
	return slices.BinarySearchFunc(t.items, off, func(it item, off int64) int {
		switch {
		case it.off < off:
			return -1
		case it.off > off:
			return 1
		}
		return 0
	})
}

// ReplaceOrInsert adds it, replacing the item at its offset if there is one.
func (t *takenSet) ReplaceOrInsert(it item) {
	i, found := t.find(it.off)
	if found {
		t.items[i] = it
		return
	}
	t.items = slices.Insert(t.items, i, it)
}

// Has reports whether a message at off is taken.
func (t *takenSet) Has(off int64) bool {
	_, found := t.find(off)
	return found
}

// Delete removes and returns the item at off, if there is one.
func (t *takenSet) Delete(off int64) (item, bool) {
	i, found := t.find(off)
	if !found {
		return item{}, false
	}
	it := t.items[i]
	t.items = slices.Delete(t.items, i, i+1) // zeroes the vacated slot
	return it, true
}

// Min returns the item with the smallest offset, if any.
func (t *takenSet) Min() (item, bool) {
	if len(t.items) == 0 {
		return item{}, false
	}
	return t.items[0], true
}

// Max returns the item with the largest offset, if any.
func (t *takenSet) Max() (item, bool) {
	if len(t.items) == 0 {
		return item{}, false
	}
	return t.items[len(t.items)-1], true
}

// All returns the items in offset order, for reading until the set next changes.
func (t *takenSet) All() []item { return t.items }

// Clear empties the set, keeping its memory (its entries zeroed for the collector).
func (t *takenSet) Clear() {
	clear(t.items)
	t.items = t.items[:0]
}
