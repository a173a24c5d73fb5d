package processqueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
)

func TestPut(t *testing.T) {
	for _, tc := range []struct {
		name      string
		before    [][]int64 // earlier Puts
		put       []int64
		wantAdded []int64
		wantCount int64
		wantSize  int64
	}{
		{"new messages", nil, span(0, 4), span(0, 4), 5, sizeOf(span(0, 4)...)},
		{"empty batch", nil, nil, nil, 0, 0},
		{"all duplicates", [][]int64{span(0, 4)}, span(0, 4), []int64{}, 5, sizeOf(span(0, 4)...)},
		{"overlap", [][]int64{span(0, 4)}, span(3, 7), span(5, 7), 8, sizeOf(span(0, 7)...)},
		{"repeat inside the batch", nil, []int64{1, 2, 2, 3, 1}, []int64{1, 2, 3}, 3, sizeOf(1, 2, 3)},
		{"out of order", nil, []int64{9, 3, 5}, []int64{9, 3, 5}, 3, sizeOf(9, 3, 5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pq := New(t0)
			for _, b := range tc.before {
				pq.Put(msgsAt(b...), -1)
			}
			msgs := msgsAt(tc.put...)
			added, _ := pq.Put(msgs, -1)
			if tc.wantAdded == nil {
				require.Empty(t, added)
			} else {
				require.Equal(t, tc.wantAdded, offsetsOf(added))
			}
			require.Equal(t, tc.wantCount, pq.Count())
			require.Equal(t, tc.wantSize, pq.Size())
			for _, m := range added {
				require.True(t, pq.Contains(m))
			}
		})
	}
}

func TestPutAliasesWhenNoDuplicate(t *testing.T) {
	pq := New(t0)
	msgs := msgsAt(span(0, 31)...)
	added, _ := pq.Put(msgs, -1)
	require.Len(t, added, 32)
	require.Same(t, &msgs[0], &added[0], "added should be msgs itself")

	// A duplicate forces a copy, and msgs is left untouched.
	msgs2 := msgsAt(31, 32, 33)
	added2, _ := pq.Put(msgs2, -1)
	require.Equal(t, []int64{32, 33}, offsetsOf(added2))
	require.Equal(t, []int64{31, 32, 33}, offsetsOf(msgs2))
}

func TestPutKeepsFirstCopy(t *testing.T) {
	pq := New(t0)
	first := msgsAt(5)
	pq.Put(first, -1)
	pq.MarkConsumeStart(first, t0)
	pq.Put(msgsAt(5), -1)
	got := pq.Expired(t0.Add(time.Hour), time.Minute, 10)
	require.Len(t, got, 1)
	require.Same(t, first[0], got[0])
}

func TestPutIgnoresTakenOffsets(t *testing.T) {
	pq := New(t0)
	pq.Put(msgsAt(span(0, 4)...), -1)
	require.Len(t, pq.Take(2), 2) // 0, 1 taken
	added, _ := pq.Put(msgsAt(0, 1, 5), -1)
	require.Equal(t, []int64{5}, offsetsOf(added))
	require.Equal(t, int64(6), pq.Count())
}

func TestPutDispatch(t *testing.T) {
	// Java putMessage: dispatch when the cache is not empty and no consume task owns the
	// queue; Take clears the ownership when it finds nothing.
	pq := New(t0)
	_, d := pq.Put(nil, -1)
	require.False(t, d, "empty batch into an empty cache")
	_, d = pq.Put(msgsAt(1, 2), -1)
	require.True(t, d, "first messages")
	_, d = pq.Put(msgsAt(3), -1)
	require.False(t, d, "a task already owns the queue")
	require.Len(t, pq.Take(10), 3)
	_, d = pq.Put(msgsAt(4), -1)
	require.False(t, d, "Take found messages, so the task still owns the queue")
	require.Len(t, pq.Take(10), 1)
	require.Empty(t, pq.Take(10)) // the task ends
	_, d = pq.Put(msgsAt(4), -1)
	require.False(t, d, "only a duplicate of a taken message: cache still empty")
	_, d = pq.Put(msgsAt(5), -1)
	require.True(t, d, "new message after the task ended")
}

func TestPutBrokerMaxOffset(t *testing.T) {
	pq := New(t0)
	require.Equal(t, int64(-1), pq.BrokerMaxOffset())
	require.Zero(t, pq.AccumulatedCount())

	pq.Put(msgsAt(span(0, 9)...), 100)
	require.Equal(t, int64(100), pq.BrokerMaxOffset())
	require.Equal(t, int64(91), pq.AccumulatedCount(), "max offset minus last message's offset")

	pq.Put(msgsAt(10, 11), 12)
	require.Equal(t, int64(12), pq.BrokerMaxOffset())
	require.Equal(t, int64(1), pq.AccumulatedCount())

	pq.Put(msgsAt(12, 13), 13)
	require.Equal(t, int64(13), pq.BrokerMaxOffset())
	require.Equal(t, int64(1), pq.AccumulatedCount(), "non-positive difference keeps the old value")

	pq.Put(msgsAt(14), -1)
	require.Equal(t, int64(13), pq.BrokerMaxOffset(), "unknown max offset keeps the old value")

	pq.Put(nil, 500)
	require.Equal(t, int64(13), pq.BrokerMaxOffset(), "an empty batch carries nothing")
}

func TestRemove(t *testing.T) {
	for _, tc := range []struct {
		name      string
		puts      [][]int64
		remove    []int64
		want      int64
		wantCount int64
		wantSize  int64
	}{
		{"empty cache", nil, []int64{1}, -1, 0, 0},
		{"empty cache, nothing to remove", nil, nil, -1, 0, 0},
		{"head removed", [][]int64{span(0, 4)}, []int64{0}, 1, 4, sizeOf(1, 2, 3, 4)},
		{"middle removed", [][]int64{span(0, 4)}, []int64{2, 3}, 0, 3, sizeOf(0, 1, 4)},
		{"all removed", [][]int64{span(0, 4)}, span(0, 4), 5, 0, 0},
		{"nothing present removed", [][]int64{span(3, 4)}, []int64{1, 9}, 3, 2, sizeOf(3, 4)},
		{"gapped offsets emptied", [][]int64{{10, 20, 30}}, []int64{30, 10, 20}, 31, 0, 0},
		// queueOffsetMax is the highest offset ever put, not the last put.
		{"highest seen, not last put", [][]int64{{50}, {7}}, []int64{7, 50}, 51, 0, 0},
		{"highest seen survives removal", [][]int64{{50}, {7}}, []int64{50}, 7, 1, sizeOf(7)},
		{"repeat in the removed list", [][]int64{span(0, 2)}, []int64{0, 0, 1}, 2, 1, sizeOf(2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pq := New(t0)
			for _, b := range tc.puts {
				pq.Put(msgsAt(b...), -1)
			}
			got := pq.Remove(msgsAt(tc.remove...))
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.wantCount, pq.Count())
			require.Equal(t, tc.wantSize, pq.Size())
			require.NotEqual(t, t0.UnixNano(), pq.LastConsumeTime().UnixNano(), "Remove stamps the last consume time")
			checkStartList(t, pq)
		})
	}
}

func TestRemoveAfterRemoveAllThenPut(t *testing.T) {
	pq := New(t0)
	pq.Put(msgsAt(span(0, 9)...), -1)
	require.Equal(t, int64(10), pq.Remove(msgsAt(span(0, 9)...)))
	require.Equal(t, int64(-1), pq.Remove(msgsAt(3)), "cache empty at the start: -1")
	pq.Put(msgsAt(10, 11), -1)
	require.Equal(t, int64(11), pq.Remove(msgsAt(10)))
}

func TestRemoveNeverPassesTakenMessages(t *testing.T) {
	// Not a Java call pattern (Java's orderly consumer never calls removeMessage), but
	// the offset must still not pass a message a listener holds.
	pq := New(t0)
	pq.Put(msgsAt(span(0, 5)...), -1)
	require.Len(t, pq.Take(2), 2) // 0, 1 taken
	require.Equal(t, int64(0), pq.Remove(msgsAt(2, 3, 4, 5)))
	off, ok := pq.Commit()
	require.True(t, ok)
	require.Equal(t, int64(2), off)
	require.Zero(t, pq.Count())
}

func TestMaxSpan(t *testing.T) {
	pq := New(t0)
	require.Zero(t, pq.MaxSpan())
	pq.Put(msgsAt(5), -1)
	require.Zero(t, pq.MaxSpan())
	pq.Put(msgsAt(7, 2000), -1)
	require.Equal(t, int64(1995), pq.MaxSpan())
	pq.Take(1) // taken messages are outside the span
	require.Equal(t, int64(1993), pq.MaxSpan())
}

func TestContainsAndHasCached(t *testing.T) {
	pq := New(t0)
	require.False(t, pq.HasCached())
	require.False(t, pq.Contains(nil))
	msgs := msgsAt(1, 2)
	pq.Put(msgs, -1)
	require.True(t, pq.HasCached())
	require.True(t, pq.Contains(msgs[0]))
	require.True(t, pq.ContainsOffset(2))
	require.False(t, pq.ContainsOffset(3))
	pq.Take(1)
	require.False(t, pq.ContainsOffset(1), "taken messages are not in the cache")
	pq.Remove(msgs[1:])
	require.False(t, pq.HasCached())
}

func TestClear(t *testing.T) {
	pq := New(t0)
	msgs := msgsAt(span(10, 19)...)
	pq.Put(msgs, -1)
	pq.MarkConsumeStart(msgs[5:], t0)
	pq.Take(3)
	pq.SetDropped(true)
	pq.Clear()
	require.Zero(t, pq.Count())
	require.Zero(t, pq.Size())
	require.False(t, pq.HasCached())
	require.Zero(t, pq.TakenCount())
	require.True(t, pq.Dropped(), "flags survive Clear")
	require.Nil(t, pq.Expired(t0.Add(time.Hour), time.Second, 100))
	checkStartList(t, pq)
	// Java resets queueOffsetMax to 0.
	pq.Put(msgsAt(3), -1)
	require.Equal(t, int64(4), pq.Remove(msgsAt(3)))
}

func TestNilMessagesIgnored(t *testing.T) {
	pq := New(t0)
	msgs := []*message.Ext{nil, msgsAt(1)[0], nil}
	added, d := pq.Put(msgs, 10)
	require.True(t, d)
	require.Equal(t, []int64{1}, offsetsOf(added))
	require.Equal(t, int64(-1), pq.BrokerMaxOffset(), "nil last message carries no hint")
	pq.MarkConsumeStart(msgs, t0)
	pq.ConsumeAgain(msgs)
	require.Equal(t, int64(2), pq.Remove(msgs))
}
