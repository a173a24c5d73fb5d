package processqueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNewTimes(t *testing.T) {
	pq := New(t0)
	require.True(t, pq.LastPullTime().Equal(t0))
	require.True(t, pq.LastConsumeTime().Equal(t0))
	require.True(t, pq.LastLockTime().Equal(t0))
	require.False(t, pq.Dropped())
	require.False(t, pq.Locked())
}

func TestPullExpired(t *testing.T) {
	for _, tc := range []struct {
		name string
		idle time.Duration
		want bool
	}{
		{"fresh", 0, false},
		{"exactly the limit", PullMaxIdleTime, false},
		{"just past the limit", PullMaxIdleTime + time.Nanosecond, true},
		{"clock went back", -time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pq := New(t0.Add(-time.Hour))
			pq.SetLastPullTime(t0)
			require.Equal(t, tc.want, pq.PullExpired(t0.Add(tc.idle)))
		})
	}
	require.Equal(t, 120*time.Second, PullMaxIdleTime, "Java's default")
}

func TestLockExpired(t *testing.T) {
	for _, tc := range []struct {
		name string
		age  time.Duration
		want bool
	}{
		{"fresh", time.Second, false},
		{"exactly the limit", LockMaxLiveTime, false},
		{"just past the limit", LockMaxLiveTime + time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pq := New(t0.Add(-time.Hour))
			pq.SetLocked(true, t0)
			require.Equal(t, tc.want, pq.LockExpired(t0.Add(tc.age)))
		})
	}
	require.Equal(t, 30*time.Second, LockMaxLiveTime, "Java's default")
	require.Equal(t, 20*time.Second, LockInterval, "Java's default")
}

func TestSetLocked(t *testing.T) {
	pq := New(t0)
	pq.SetLocked(true, t0.Add(time.Minute))
	require.True(t, pq.Locked())
	require.True(t, pq.LastLockTime().Equal(t0.Add(time.Minute)))
	pq.SetLocked(false, t0.Add(time.Hour))
	require.False(t, pq.Locked())
	require.True(t, pq.LastLockTime().Equal(t0.Add(time.Minute)), "unlocking keeps the last lock time")
	require.True(t, pq.LockExpired(t0.Add(time.Hour)))
}

func TestSimpleState(t *testing.T) {
	pq := New(t0)
	pq.SetDropped(true)
	require.True(t, pq.Dropped())
	pq.SetDropped(false)
	require.False(t, pq.Dropped())
	pq.IncTryUnlockTimes()
	pq.IncTryUnlockTimes()
	require.Equal(t, int64(2), pq.TryUnlockTimes())
	pq.SetLastConsumeTime(t0.Add(time.Second))
	require.True(t, pq.LastConsumeTime().Equal(t0.Add(time.Second)))
}

func TestSnapshot(t *testing.T) {
	pq := New(t0)
	require.Equal(t, Info{
		LastLockTimestamp:    t0.UnixMilli(),
		LastPullTimestamp:    t0.UnixMilli(),
		LastConsumeTimestamp: t0.UnixMilli(),
	}, pq.Snapshot(), "empty queue")

	big := msgsAt(span(100, 104)...)
	for _, m := range big {
		m.Body = make([]byte, 1<<20) // 5 MiB in all
	}
	pq.Put(big, -1)
	pq.Put(msgsAt(105, 110), -1)
	pq.Take(2) // 100, 101
	pq.SetLocked(true, t0.Add(time.Second))
	pq.IncTryUnlockTimes()
	pq.SetDropped(true)
	pq.SetLastPullTime(t0.Add(2 * time.Second))
	pq.SetLastConsumeTime(t0.Add(3 * time.Second))

	require.Equal(t, Info{
		CachedMsgMinOffset:      102,
		CachedMsgMaxOffset:      110,
		CachedMsgCount:          5,
		CachedMsgSizeInMiB:      5, // taken messages count here, as in Java
		TransactionMsgMinOffset: 100,
		TransactionMsgMaxOffset: 101,
		TransactionMsgCount:     2,
		Locked:                  true,
		TryUnlockTimes:          1,
		LastLockTimestamp:       t0.UnixMilli() + 1000,
		Dropped:                 true,
		LastPullTimestamp:       t0.UnixMilli() + 2000,
		LastConsumeTimestamp:    t0.UnixMilli() + 3000,
	}, pq.Snapshot())
}
