package offset

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// The commit hook asks for a flush whenever an offset is ahead of the broker's and no
// write will bring it there by itself: after a move, and after a write that a flush had
// to skip ends with the offset still ahead. It stays quiet when nothing is left to write
// and after failed writes (the periodic persist covers those, without a retry loop).
func TestCommitHook(t *testing.T) {
	ctx := context.Background()
	b := newFakeBroker()
	s := NewRemoteStore("g", b)
	asked := 0
	s.SetCommitHook(func() { asked++ })
	take := func() int { n := asked; asked = 0; return n }

	s.Update(qa0, 5, true)
	require.Equal(t, 1, take(), "a new offset")
	s.Update(qa0, 5, true)
	s.Update(qa0, 4, true)
	require.Zero(t, take(), "not moved")

	c, ok := s.BeginPullCommit(qa0)
	require.True(t, ok)
	s.Update(qa0, 7, true)
	require.Equal(t, 1, take(), "moved while the pull is in flight")
	require.NoError(t, s.Flush(ctx))
	require.Empty(t, b.takeUpdates(), "the flush skips the queue whose pull carries its offset")
	s.EndPullCommit(c, CommitStored)
	require.Equal(t, 1, take(), "the pull stored 5, 7 is still to write")
	require.NoError(t, s.Flush(ctx))
	require.Equal(t, int64(7), b.offsets[qa0])
	require.Zero(t, take(), "written, nothing left")

	c, _ = s.BeginPullCommit(qa0)
	s.EndPullCommit(c, CommitStored)
	require.Zero(t, take(), "the pull stored what was in memory")

	s.Update(qa0, 9, true)
	take()
	c, _ = s.BeginPullCommit(qa0)
	s.EndPullCommit(c, CommitNotStored)
	require.Equal(t, 1, take(), "refused unread: the offset is still to write")
	c, _ = s.BeginPullCommit(qa0)
	s.EndPullCommit(c, CommitUnknown)
	require.Zero(t, take(), "fate unknown: left to the persist round")

	s.UpdateAndFreeze(qa1, 3)
	require.Equal(t, 1, take(), "a frozen (reset) offset is committed too")
	s.Update(qa1, 8, true)
	require.Zero(t, take(), "frozen: not moved")

	b.updateErr[qa1.BrokerName] = errors.New("down")
	require.Error(t, s.Persist(ctx, qa1))
	require.Zero(t, take(), "a failed write is left to the persist round")

	s.Update(qb0, 2, true)
	take()
	c, ok = s.BeginPullCommit(qb0)
	require.True(t, ok)
	s.Remove(qb0)
	s.EndPullCommit(c, CommitNotStored)
	require.Zero(t, take(), "the queue was removed meanwhile")
}
