package integration

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// processCPU returns the CPU time the process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkConsume measures the consumer end to end on the fake broker: b.N messages
// preloaded over 8 queues, consumed by a listener that only counts. ns/op and
// allocs/op are per message and include the fake broker's share (it runs in the same
// process), as does cpu-ns/op, the process's CPU time per message; compare runs, not
// absolute values. The namespace case shows that restoring topic names costs nothing
// per message; the service-time case answers each pull 300 µs after it arrived, as a
// real broker takes, so the consumer's workers wait for pulls as they do in production.
//
//	go test -run '^$' -bench BenchmarkConsume -benchmem ./test/integration
func BenchmarkConsume(b *testing.B) {
	for _, size := range []struct {
		name      string
		body      int
		namespace string
		service   time.Duration
	}{{"128B", 128, "", 0}, {"1KiB", 1024, "", 0}, {"128B-namespace", 128, "NsB", 0}, {"128B-service300us", 128, "", 300 * time.Microsecond}} {
		b.Run(size.name, func(b *testing.B) {
			topic := "bench"
			if size.namespace != "" {
				topic = size.namespace + "%bench"
			}
			c, err := fakebroker.NewCluster(fakebroker.WithTopic(topic, 8), fakebroker.WithPullServiceTime(size.service))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			body := make([]byte, size.body)
			const chunk = 1024
			for i := 0; i < b.N; i += chunk {
				msgs := make([]*message.Message, min(chunk, b.N-i))
				for j := range msgs {
					msgs[j] = &message.Message{Topic: topic, Body: body}
				}
				if _, err := c.Produce(topic, msgs...); err != nil {
					b.Fatal(err)
				}
			}
			var got atomic.Int64
			done := make(chan struct{})
			pc, err := consumer.NewPushConsumer("bench-group",
				consumer.WithNameServers(c.NameServerAddr()),
				consumer.WithNamespace(size.namespace),
				consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
			if err != nil {
				b.Fatal(err)
			}
			_ = pc.Subscribe("bench", consumer.All())
			_ = pc.RegisterListener(consumer.ConcurrentlyFunc(func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
				if got.Add(int64(len(msgs))) == int64(b.N) {
					close(done)
				}
				return consumer.ConsumeSuccess
			}))
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU(b)
			if err := pc.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(5 * time.Minute):
				b.Fatalf("consumed %d of %d", got.Load(), b.N)
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
			_ = pc.Shutdown(context.Background())
		})
	}
}
