package offset

import (
	"testing"

	"github.com/stretchr/testify/require"
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
