package processqueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestExpired(t *testing.T) {
	const timeout = 15 * time.Minute
	type mark struct {
		offs []int64
		at   time.Duration // after t0
	}
	for _, tc := range []struct {
		name   string
		put    []int64
		marks  []mark
		remove []int64
		now    time.Duration // after t0
		limit  int
		want   []int64
	}{
		{"none stamped", span(0, 4), nil, nil, time.Hour, 10, nil},
		{"not yet expired", span(0, 4), []mark{{span(0, 4), 0}}, nil, timeout, 10, nil},
		{"just expired", span(0, 4), []mark{{span(0, 4), 0}}, nil, timeout + 1, 10, span(0, 4)},
		{"only the old ones", span(0, 9), []mark{{[]int64{7, 8}, 0}, {[]int64{1, 2}, time.Minute}}, nil,
			timeout + time.Second, 10, []int64{7, 8}},
		{"limit keeps the oldest, in offset order", span(0, 9),
			[]mark{{[]int64{9}, 0}, {[]int64{5}, time.Second}, {[]int64{1}, 2 * time.Second}, {[]int64{0}, 3 * time.Second}},
			nil, time.Hour, 3, []int64{1, 5, 9}},
		{"stamps out of order", span(0, 9),
			[]mark{{[]int64{4}, 3 * time.Second}, {[]int64{6}, time.Second}, {[]int64{2}, 2 * time.Second}, {[]int64{8}, 0}},
			nil, time.Hour, 2, []int64{6, 8}},
		{"re-stamp restarts the clock", span(0, 4), []mark{{span(0, 4), 0}, {[]int64{0, 1}, 20 * time.Minute}}, nil,
			timeout + time.Minute, 10, []int64{2, 3, 4}},
		{"removed messages are gone", span(0, 4), []mark{{span(0, 4), 0}}, []int64{0, 2, 4},
			time.Hour, 10, []int64{1, 3}},
		{"stamping an uncached message does nothing", span(0, 1), []mark{{[]int64{1, 7}, 0}}, nil,
			time.Hour, 10, []int64{1}},
		{"a stuck message deep in the cache", span(0, 99), []mark{{span(0, 98), 50 * time.Minute}, {[]int64{99}, 0}}, nil,
			timeout + time.Minute, 10, []int64{99}},
		{"zero limit", span(0, 4), []mark{{span(0, 4), 0}}, nil, time.Hour, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pq := New(t0)
			byOff := map[int64]int{}
			msgs := msgsAt(tc.put...)
			for i, m := range msgs {
				byOff[m.QueueOffset] = i
			}
			pq.Put(msgs, -1)
			for _, mk := range tc.marks {
				pq.MarkConsumeStart(msgsAt(mk.offs...), t0.Add(mk.at))
			}
			pq.Remove(msgsAt(tc.remove...))
			checkStartList(t, pq)
			got := pq.Expired(t0.Add(tc.now), timeout, tc.limit)
			if tc.want == nil {
				require.Nil(t, got)
				return
			}
			require.Equal(t, tc.want, offsetsOf(got))
			for _, m := range got {
				require.Same(t, msgs[byOff[m.QueueOffset]], m, "Expired returns the cached message")
			}
		})
	}
}

func TestConsumeStartTime(t *testing.T) {
	pq := New(t0)
	msgs := msgsAt(1, 2)
	pq.Put(msgs, -1)
	_, ok := pq.ConsumeStartTime(1)
	require.False(t, ok)
	pq.MarkConsumeStart(msgs[:1], t0.Add(time.Second))
	at, ok := pq.ConsumeStartTime(1)
	require.True(t, ok)
	require.True(t, at.Equal(t0.Add(time.Second)))
	_, ok = pq.ConsumeStartTime(9)
	require.False(t, ok)
}

func TestExpiredThenRemove(t *testing.T) {
	// The consumer's expiry round: find, send back, remove; the offset then moves past
	// the stuck message.
	pq := New(t0)
	msgs := msgsAt(span(0, 3)...)
	pq.Put(msgs, -1)
	pq.MarkConsumeStart(msgs, t0)
	require.Equal(t, int64(0), pq.Remove(msgs[1:])) // 1..3 consumed, 0 stuck
	exp := pq.Expired(t0.Add(time.Hour), 15*time.Minute, 16)
	require.Equal(t, []int64{0}, offsetsOf(exp))
	require.Equal(t, int64(4), pq.Remove(exp))
	require.False(t, pq.Contains(exp[0]), "the late listener's send-back is skipped")
	require.Nil(t, pq.Expired(t0.Add(time.Hour), 15*time.Minute, 16))
}

// InCall gives a copy of a message only while that very message is cached and in a
// listener call; RetryLater takes it out of the call and counts one more reconsume time.
func TestInCallAndRetryLater(t *testing.T) {
	pq := New(t0)
	msgs := msgsAt(1, 2)
	pq.Put(msgs, -1)
	_, ok := pq.InCall(msgs[0])
	require.False(t, ok, "cached but not in a call")
	pq.MarkConsumeStart(msgs, t0)
	c, ok := pq.InCall(msgs[0])
	require.True(t, ok)
	require.Equal(t, *msgs[0], c)
	require.NotSame(t, &msgs[0].Body[0], &c.Body[0], "the body is copied: a lent one is reused once removed")
	_, ok = pq.InCall(msgsAt(1)[0])
	require.False(t, ok, "another message at the same offset")

	pq.RetryLater(msgs[:1])
	require.Equal(t, int32(1), msgs[0].ReconsumeTimes)
	_, ok = pq.InCall(msgs[0])
	require.False(t, ok, "kept for a local retry: out of its call")
	require.True(t, pq.Contains(msgs[0]), "and still cached")

	pq.Remove(msgs[1:])
	_, ok = pq.InCall(msgs[1])
	require.False(t, ok, "consumed")
}

// A sweep copying a message while the worker counts a local retry on it: no data race
// and the copy has the count from before or after. It checks what it is for only under
// the race detector, as .ci/run and the README's test command run it (-race).
func TestInCallCopiesUnderTheRetryLock(t *testing.T) {
	pq := New(t0)
	msgs := msgsAt(1)
	pq.Put(msgs, -1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 1000 {
			pq.MarkConsumeStart(msgs, t0)
			pq.RetryLater(msgs)
		}
	}()
	last := int32(0)
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		if c, ok := pq.InCall(msgs[0]); ok {
			require.GreaterOrEqual(t, c.ReconsumeTimes, last)
			last = c.ReconsumeTimes
		}
	}
	require.Equal(t, int32(1000), msgs[0].ReconsumeTimes)
}

// RestampConsumeStart stamps again only what is still in its call: a message kept for a
// local retry, or removed, or another message at its offset, is left unstamped, so the
// sweeper's InCall finds it out of any call.
func TestRestampConsumeStartOnlyInCall(t *testing.T) {
	pq := New(t0)
	msgs := msgsAt(1, 2, 3)
	pq.Put(msgs, -1)
	pq.MarkConsumeStart(msgs, t0)
	pq.RetryLater(msgs[:1]) // its call ended: waits for a local retry
	pq.Remove(msgs[1:2])    // consumed
	later := t0.Add(time.Minute)
	pq.RestampConsumeStart(append(msgs, msgsAt(3)[0]), later)

	_, ok := pq.InCall(msgs[0])
	require.False(t, ok, "a message waiting for its local retry is not put back in a call")
	require.True(t, pq.Contains(msgs[0]))
	start, ok := pq.ConsumeStartTime(3)
	require.True(t, ok)
	require.True(t, start.Equal(later), "the message still in its call is restamped")
	require.Equal(t, []int64{3}, offsetsOf(pq.Expired(later.Add(time.Hour), time.Minute, 16)))
}
