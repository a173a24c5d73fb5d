package plugintest

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

// BenchConsume is test/integration's BenchmarkConsume with hooks: b.N messages of
// 128 B over 8 queues, consumer and fake broker in one process, a listener that only
// counts. Besides ns/op it reports cpu-ns/msg, the process's CPU time (consumer and
// fake broker) per message, which the machine's other load does not inflate as it does
// ns/op; the difference with and without a plugin is the plugin's CPU per message.
func BenchConsume(b *testing.B, hooks ...consumer.Hook) {
	c, err := fakebroker.NewCluster(fakebroker.WithTopic("bench", 8))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	body := make([]byte, 128)
	const chunk = 1024
	for i := 0; i < b.N; i += chunk {
		msgs := make([]*message.Message, min(chunk, b.N-i))
		for j := range msgs {
			msgs[j] = &message.Message{Topic: "bench", Body: body}
		}
		if _, err := c.Produce("bench", msgs...); err != nil {
			b.Fatal(err)
		}
	}
	var got atomic.Int64
	done := make(chan struct{})
	pc, err := consumer.NewPushConsumer("bench-group", consumer.WithNameServers(c.NameServerAddr()),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset), consumer.WithHooks(hooks...))
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
	cpu0 := processCPU(b)
	if err := pc.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		b.Fatalf("consumed %d of %d", got.Load(), b.N)
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/msg")
	_ = pc.Shutdown(context.Background())
}

// processCPU returns the user and system CPU time the process used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchHook measures a hook's own cost for one listener call on one message: what the
// consume path pays per message with the plugin. end is the hook's OnConsumeEnd.
func BenchHook(b *testing.B, end func(context.Context, *consumer.ConsumeCall)) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		now := time.Now()
		msg := &message.Ext{Message: message.Message{Topic: "bench"}, CachedAt: now.Add(-time.Millisecond)}
		call := &consumer.ConsumeCall{Group: "g", ClientID: "127.0.0.1@1", Queue: message.Queue{Topic: "bench", BrokerName: "b", QueueID: 1},
			Msgs: []*message.Ext{msg}, Begin: now, Took: 2 * time.Millisecond, Success: true}
		ctx := context.Background()
		for pb.Next() {
			end(ctx, call)
		}
	})
}
