package consumer

import (
	"testing"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/pull"
)

// BenchmarkTaskQueue queues the messages of a pull of 32 as calls of one message over 8
// queues and takes them back, as the pull service and the workers do: the worker queue's
// own cost per message.
//
//	go test -run '^$' -bench BenchmarkTaskQueue -benchmem ./consumer
func BenchmarkTaskQueue(b *testing.B) {
	q := newTaskQueue()
	reqs := make([]*pull.Request, 8)
	for i := range reqs {
		reqs[i] = &pull.Request{}
	}
	msgs := make([]*message.Ext, 32)
	for i := range msgs {
		msgs[i] = &message.Ext{}
	}
	w := q.worker()
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += len(msgs) {
		q.pushBatches(reqs[(n/32)%8], msgs, 1, false, nil)
		for range msgs {
			if _, ok := w.pop(); !ok {
				b.Fatal("closed")
			}
		}
	}
}
