package offset

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
)

// Writes through a lease stop when the queue is removed or begun again: a listener
// result or pull answer that outlives its assignment cannot move the offset of a queue
// this client no longer owns, nor one reset since.
func TestLeases(t *testing.T) {
	for name, s := range map[string]Store{"remote": NewRemoteStore("g", nil), "local": mustLocal(t)} {
		t.Run(name, func(t *testing.T) {
			old := s.Begin(qa0)
			s.UpdateFor(old, 10, true)
			off, ok := s.Table()[qa0]
			require.True(t, ok)
			require.Equal(t, int64(10), off)

			// A reset: the queue is made anew at 5; the old assignment's late result
			// (an increase-only 12) does not move it past the reset.
			s.UpdateAndFreeze(qa0, 5)
			s.Remove(qa0)
			renewed := s.Begin(qa0)
			s.Update(qa0, 5, false)
			s.UpdateFor(old, 12, true)
			require.Equal(t, int64(5), s.Table()[qa0])
			s.UpdateFor(renewed, 6, true)
			require.Equal(t, int64(6), s.Table()[qa0])

			// Removed (assigned elsewhere): nothing of it writes any more.
			s.Remove(qa0)
			s.UpdateFor(renewed, 20, true)
			if name == "remote" {
				require.NotContains(t, s.Table(), qa0, "no entry made again for a queue no longer ours")
			} else {
				require.Equal(t, int64(6), s.Table()[qa0], "the local store keeps its offsets")
			}

			// Leases of other queues are their own.
			other := s.Begin(qa1)
			s.UpdateFor(other, 3, true)
			require.Equal(t, int64(3), s.Table()[qa1])
		})
	}
}

func mustLocal(t *testing.T) *LocalStore {
	s, err := NewLocalStore(t.TempDir(), "c", "g")
	require.NoError(t, err)
	return s
}

// A lease remembers its queue's entry after the first update through it; when the
// table forgets that entry (a persist of the other queues, with forget), the next
// update through the lease makes a new one that the table holds, as an update without
// the remembered entry would.
func TestLeaseUpdateAfterForget(t *testing.T) {
	tb := newTable()
	l := tb.begin(qa0)
	tb.updateFor(l, 5, false)
	tb.updateFor(l, 6, true)
	off, ok := tb.get(qa0)
	require.True(t, ok)
	require.Equal(t, int64(6), off)

	tb.dirty([]message.Queue{qa1}, true)
	_, ok = tb.get(qa0)
	require.False(t, ok, "forgotten")

	tb.updateFor(l, 4, true) // made anew: the increase-only rule has nothing to compare with
	off, ok = tb.get(qa0)
	require.True(t, ok, "the update through the lease is in the table")
	require.Equal(t, int64(4), off)
	require.Equal(t, map[message.Queue]int64{qa0: 4}, tb.changed())
}
