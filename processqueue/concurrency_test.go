package processqueue

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/atomic"
	"go.uber.org/goleak"

	"github.com/rmqpush/rmqpush/message"
)

// storeMax is the caller's increase-only offset store.
func storeMax(store *atomic.Int64, off int64) {
	for {
		cur := store.Load()
		if off <= cur || store.CompareAndSwap(cur, off) {
			return
		}
	}
}

// TestConcurrentConsume runs the concurrent consumer's pattern: one goroutine puts
// batches (with overlapping re-pulls), workers mark, remove and store offsets, and a
// reader polls everything else. A message is never dispatched again while a copy is
// still cached (a re-pulled message that was already removed is a new delivery), and
// every offset a Remove returns has every lower offset already consumed.
func TestConcurrentConsume(t *testing.T) {
	defer goleak.VerifyNone(t)
	const (
		total   = 4000
		batch   = 32
		workers = 4
	)
	pq := New(t0)
	var consumed, inFlight [total]atomic.Bool
	var store atomic.Int64
	store.Store(-1)
	work := make(chan []*message.Ext, 64)
	done := make(chan struct{})
	var wg sync.WaitGroup

	wg.Add(1)
	go func() { // the pull service
		defer wg.Done()
		defer close(work)
		for lo := int64(0); lo < total; lo += batch {
			// Re-pull the previous half batch now and then: duplicates must not be
			// dispatched again.
			from := lo
			if lo%(batch*5) == 0 && lo > 0 {
				from = lo - batch/2
			}
			added, _ := pq.Put(msgsAt(span(from, min(lo+batch, total)-1)...), total)
			for _, m := range added {
				if inFlight[m.QueueOffset].Swap(true) {
					t.Errorf("offset %d dispatched while still cached", m.QueueOffset)
				}
			}
			for i := 0; i < len(added); i += 4 {
				work <- added[i:min(i+4, len(added))]
			}
		}
	}()

	for range workers {
		wg.Add(1)
		go func() { // consume workers
			defer wg.Done()
			for msgs := range work {
				pq.MarkConsumeStart(msgs, time.Now())
				for _, m := range msgs {
					consumed[m.QueueOffset].Store(true)
				}
				for i := range msgs { // one by one, as batch size 1 does
					// Cleared before Remove: until Remove, a re-pull finds it cached.
					inFlight[msgs[i].QueueOffset].Store(false)
					off := pq.Remove(msgs[i : i+1])
					for o := int64(0); o < min(off, total); o++ {
						if !consumed[o].Load() {
							t.Errorf("Remove returned %d before offset %d was consumed", off, o)
							break
						}
					}
					storeMax(&store, off)
				}
			}
		}()
	}

	var rg sync.WaitGroup
	rg.Add(1)
	go func() { // running info, flow control and expiry readers
		defer rg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			_ = pq.Snapshot()
			_ = pq.MaxSpan()
			_ = pq.Count() + pq.Size()
			_ = pq.Expired(time.Now(), time.Hour, 16)
			// Timeout 0: every stamped message has expired, while workers remove them.
			for _, m := range pq.Expired(time.Now(), 0, 16) {
				if m == nil {
					t.Error("Expired returned a nil message")
				}
			}
			_ = pq.ContainsOffset(total / 2)
			_ = pq.PullExpired(time.Now())
		}
	}()

	wg.Wait()
	close(done)
	rg.Wait()
	require.Zero(t, pq.Count())
	require.Zero(t, pq.Size())
	require.Equal(t, int64(total), store.Load())
	for o := range consumed {
		require.True(t, consumed[o].Load(), "offset %d never consumed", o)
	}
	checkStartList(t, pq)
}

// TestConcurrentOrderly runs the orderly pattern: one goroutine puts, one consume task
// at a time takes, and either commits or puts the batch back, under the consume lock,
// while rebalance-like code tries the lock and reads state.
func TestConcurrentOrderly(t *testing.T) {
	defer goleak.VerifyNone(t)
	const total = 16 * 188
	pq := New(t0)
	var store atomic.Int64
	store.Store(-1)
	kick := make(chan struct{}, 1)
	putDone := make(chan struct{})
	var wg sync.WaitGroup

	wg.Add(1)
	go func() { // the pull service
		defer wg.Done()
		defer close(putDone)
		for lo := int64(0); lo < total; lo += 16 {
			if _, dispatch := pq.Put(msgsAt(span(lo, lo+15)...), -1); dispatch {
				select {
				case kick <- struct{}{}:
				default:
				}
			}
		}
	}()

	wg.Add(1)
	go func() { // the orderly consume service, one task at a time
		defer wg.Done()
		next := int64(0)
		round := 0
		for {
			select {
			case <-kick:
			case <-putDone:
				if !pq.HasCached() {
					return
				}
			}
			for {
				if !pq.TryLockConsume() {
					continue
				}
				msgs := pq.Take(4)
				if len(msgs) == 0 {
					pq.UnlockConsume()
					break
				}
				if msgs[0].QueueOffset != next {
					t.Errorf("took %d, want %d: out of order", msgs[0].QueueOffset, next)
				}
				round++
				if round%5 == 0 { // SUSPEND: consume again later
					pq.ConsumeAgain(msgs)
				} else {
					off, ok := pq.Commit()
					if !ok || off != msgs[len(msgs)-1].QueueOffset+1 {
						t.Errorf("Commit = %d, %v after taking %v", off, ok, offsetsOf(msgs))
					}
					storeMax(&store, off)
					next = off
				}
				pq.UnlockConsume()
			}
		}
	}()

	wg.Add(1)
	go func() { // rebalance: lock renewal and removal attempts
		defer wg.Done()
		for {
			select {
			case <-putDone:
				return
			default:
			}
			if pq.TryLockConsume() {
				_ = pq.Snapshot()
				pq.UnlockConsume()
			} else {
				pq.IncTryUnlockTimes()
			}
			pq.SetLocked(true, time.Now())
		}
	}()

	wg.Wait()
	require.Zero(t, pq.Count())
	require.Zero(t, pq.TakenCount())
	require.Equal(t, int64(total), store.Load())
}
