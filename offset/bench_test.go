package offset

import (
	"testing"

	"github.com/rmqpush/rmqpush/message"
)

// BenchmarkUpdateFor is an orderly consumer's offset update after each listener call:
// through the queue's lease, with a topic and broker name of typical length, among 16
// queues.
//
//	go test -run - -bench UpdateFor -count 6 ./offset
func BenchmarkUpdateFor(b *testing.B) {
	s := NewRemoteStore("bench-group", nil)
	var l Lease
	for i := range 16 {
		q := message.Queue{Topic: "orders-created-eu-west", BrokerName: "broker-a-0001", QueueID: int32(i)}
		l = s.Begin(q)
		s.UpdateFor(l, 0, false)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		s.UpdateFor(l, int64(i), false)
	}
}
