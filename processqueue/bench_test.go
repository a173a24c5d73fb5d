package processqueue

import (
	"testing"
	"time"

	"github.com/rmqpush/rmqpush/message"
)

// benchBatch returns 32 messages starting at offset lo, with 100-byte bodies.
func benchBatch(lo int64) []*message.Ext {
	msgs := msgsAt(span(lo, lo+31)...)
	for _, m := range msgs {
		m.Body = make([]byte, 100)
	}
	return msgs
}

// shift moves a batch 32 offsets up, so one batch can be put again and again.
func shift(msgs []*message.Ext) {
	for _, m := range msgs {
		m.QueueOffset += int64(len(msgs))
	}
}

// benchPutRemove measures one pull's worth of work for the concurrent consumer: Put 32
// messages, optionally stamp them, then Remove them one by one (batch size 1) or in one
// call. backlog messages stay cached below them the whole time, as under load.
func benchPutRemove(b *testing.B, backlog int, mark, single bool) {
	pq := New(t0)
	if backlog > 0 {
		pq.Put(msgsAt(span(0, int64(backlog)-1)...), -1)
	}
	msgs := benchBatch(int64(backlog))
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		added, _ := pq.Put(msgs, msgs[31].QueueOffset+1)
		if mark {
			pq.MarkConsumeStart(added, now)
		}
		if single {
			for i := range added {
				pq.Remove(added[i : i+1])
			}
		} else {
			pq.Remove(added)
		}
		shift(msgs)
	}
}

func BenchmarkPut32RemoveSingle(b *testing.B)    { benchPutRemove(b, 0, false, true) }
func BenchmarkPut32RemoveBatch(b *testing.B)     { benchPutRemove(b, 0, false, false) }
func BenchmarkPut32MarkRemove(b *testing.B)      { benchPutRemove(b, 0, true, true) }
func BenchmarkPut32RemoveBacklog1k(b *testing.B) { benchPutRemove(b, 1000, true, true) }

// BenchmarkTakeCommit measures the orderly cycle for one pull: Put 32, then Take and
// Commit them batchSize at a time.
func BenchmarkTakeCommit(b *testing.B) {
	for _, bs := range []int{1, 32} {
		b.Run("batch"+map[int]string{1: "1", 32: "32"}[bs], func(b *testing.B) {
			pq := New(t0)
			msgs := benchBatch(0)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				pq.Put(msgs, -1)
				for {
					if len(pq.Take(bs)) == 0 {
						break
					}
					pq.Commit()
				}
				shift(msgs)
			}
		})
	}
}

// BenchmarkExpired measures one expiry round over a 1000-message cache where 16 of
// the oldest-stamped messages have expired.
func BenchmarkExpired(b *testing.B) {
	pq := New(t0)
	msgs := msgsAt(span(0, 999)...)
	pq.Put(msgs, -1)
	pq.MarkConsumeStart(msgs[500:516], t0)
	pq.MarkConsumeStart(msgs[516:], t0.Add(time.Hour))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if len(pq.Expired(t0.Add(30*time.Minute), 15*time.Minute, 32)) != 16 {
			b.Fatal("wrong expiry")
		}
	}
}

// BenchmarkReaders measures the lock-free and read-locked calls flow control makes on
// every pull.
func BenchmarkReaders(b *testing.B) {
	pq := New(t0)
	pq.Put(msgsAt(span(0, 999)...), -1)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		_ = pq.Count()
		_ = pq.Size()
		_ = pq.MaxSpan()
	}
}
