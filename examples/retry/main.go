// Retry: a listener that acknowledges part of each batch, and a message that always
// fails.
//
//	go run ./examples/retry                          # on an embedded fake cluster
//	go run ./examples/retry -namesrv 127.0.0.1:9876  # on a real broker (real delays)
//
// First, four messages sit in one queue and arrive in one batch of 4: the listener
// acknowledges only the first two (AckIndex = 1); the other two are sent back and come
// back from %RETRY%<group> with ReconsumeTimes 1. Then a message "poison" that always
// fails is produced: after MaxReconsumeTimes (2 here) the broker moves it to the
// dead-letter queue %DLQ%<group>. The embedded cluster's delay levels are a hundred
// times shorter than a real broker's, so this takes a second or two.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/examples/internal/demo"
	"github.com/rmqpush/rmqpush/message"
)

const (
	topic = "RetryExampleTopic"
	group = "retry-example-group"
)

func main() {
	namesrv := flag.String("namesrv", "", "name server host:port of a real cluster (default: an embedded fake cluster)")
	flag.Parse()
	if err := run(*namesrv); err != nil {
		fmt.Fprintln(os.Stderr, "retry:", err)
		os.Exit(1)
	}
}

func run(namesrv string) error {
	env, err := demo.Setup(namesrv, topic)
	if err != nil {
		return err
	}
	defer env.Close()
	ctx, cancel := demo.Deadline(10 * time.Minute)
	defer cancel()

	p, err := demo.NewProducer(env.NameServer)
	if err != nil {
		return err
	}
	defer p.Close()
	p.Queue = 0 // one queue, so the messages arrive in one batch
	for _, b := range []string{"a", "b", "c", "d"} {
		if err := p.Send(ctx, &message.Message{Topic: topic, Body: []byte(b)}); err != nil {
			return err
		}
	}

	var (
		mu        sync.Mutex
		succeeded = map[string]bool{}
		failures  int
		acked     = make(chan struct{})
		finished  = make(chan struct{})
	)
	c, err := consumer.NewPushConsumer(group,
		consumer.WithNameServers(env.NameServer),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithConsumeMessageBatchMaxSize(4),
		consumer.WithMaxReconsumeTimes(2))
	if err != nil {
		return err
	}
	if err := c.Subscribe(topic, consumer.All()); err != nil {
		return err
	}
	err = c.RegisterListener(consumer.ConcurrentlyFunc(func(_ context.Context, msgs []*message.Ext,
		cc *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
		mu.Lock()
		defer mu.Unlock()
		// Acknowledge up to the first message that fails: the poison, or on a first
		// delivery the third message of the batch.
		ack := len(msgs) - 1
		for i, m := range msgs {
			if string(m.Body) == "poison" || (m.ReconsumeTimes == 0 && i == 2) {
				ack = i - 1
				break
			}
		}
		for i, m := range msgs {
			verdict := "consumed"
			switch {
			case string(m.Body) == "poison":
				verdict = "FAILED (always fails)"
				failures++
			case i > ack:
				verdict = "sent back (after AckIndex)"
			default:
				succeeded[string(m.Body)] = true
			}
			fmt.Printf("%s  batch[%d] %-8q reconsumeTimes=%d  %s\n", time.Now().Format("15:04:05.000"), i, m.Body, m.ReconsumeTimes, verdict)
		}
		fmt.Printf("              AckIndex=%d\n", ack)
		cc.AckIndex = ack
		if len(succeeded) == 4 && failures == 0 {
			close(acked)
		}
		if failures == 3 { // 1 delivery + 2 retries of the poison
			close(finished)
		}
		return consumer.ConsumeSuccess
	}))
	if err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	select {
	case <-acked:
	case <-ctx.Done():
		_ = c.Shutdown(context.Background())
		return fmt.Errorf("timed out")
	}
	fmt.Println("a, b, c, d consumed; now a message that always fails:")
	if err := p.Send(ctx, &message.Message{Topic: topic, Body: []byte("poison")}); err != nil {
		return err
	}
	select {
	case <-finished:
	case <-ctx.Done():
		_ = c.Shutdown(context.Background())
		return fmt.Errorf("timed out")
	}
	if env.Fake != nil {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && len(env.Fake.DLQMessages(group)) == 0; {
			time.Sleep(10 * time.Millisecond)
		}
		for _, m := range env.Fake.DLQMessages(group) {
			fmt.Printf("dead letter in %%DLQ%%%s: %q (reconsumeTimes=%d)\n", group, m.Body, m.ReconsumeTimes)
		}
	}
	if err := c.Shutdown(ctx); err != nil {
		return err
	}
	fmt.Printf("done: a, b, c, d consumed; poison failed 3 times and is a dead letter\n")
	return nil
}
