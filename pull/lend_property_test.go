package pull

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/processqueue"
)

// Orderly lent bodies: no answer's buffer goes back to the pool while one of its
// messages is in the ProcessQueue (cached or taken), whatever offsets the answers carry
// (in order, stale, repeated, out of order) and whatever the orderly consumer does with
// them (take, commit, consume again, roll back).
func TestHeldBodiesNeverReturnACachedBody(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var p bodyPool
		var h HeldBodies
		pq := processqueue.New(time.Now())
		owner := map[*message.Ext]*Lease{}
		var all, taken []*message.Ext
		t.Repeat(map[string]func(*rapid.T){
			"answer": func(t *rapid.T) {
				base := rapid.Int64Range(0, 60).Draw(t, "base")
				offs := rapid.SliceOfN(rapid.Int64Range(0, 8), 1, 6).Draw(t, "offsets")
				l := newLease(&p, p.Body(100))
				msgs := make([]*message.Ext, len(offs))
				for i, o := range offs {
					msgs[i] = &message.Ext{QueueOffset: base + o}
					owner[msgs[i]] = l
				}
				all = append(all, msgs...)
				h.put(pq, msgs, -1, l)
				l.Release() // the service's own reference
			},
			"take": func(t *rapid.T) {
				if len(taken) == 0 {
					taken = pq.Take(rapid.IntRange(1, 4).Draw(t, "n"))
				}
			},
			"commit": func(t *rapid.T) {
				h.Commit(pq)
				taken = nil
			},
			"consume again": func(t *rapid.T) {
				pq.ConsumeAgain(taken)
				taken = nil
			},
			"roll back": func(t *rapid.T) {
				pq.Rollback()
				taken = nil
			},
			"": func(t *rapid.T) {
				for _, m := range append(pq.Cached(all), taken...) {
					if l := owner[m]; l.buf == nil {
						t.Fatalf("message at offset %d is in the queue, its answer's buffer back in the pool", m.QueueOffset)
					}
				}
			},
		})
	})
}
