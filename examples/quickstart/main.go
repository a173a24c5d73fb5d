// Quickstart: consume 1,000 messages with an rmqpush push consumer.
//
//	go run ./examples/quickstart                         # on an embedded fake cluster
//	go run ./examples/quickstart -namesrv 127.0.0.1:9876 # on a real broker
//
// It produces the messages, consumes them with a concurrent listener, prints progress,
// and after a clean shutdown prints what was consumed and the committed offsets.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/examples/internal/demo"
	"github.com/rmqpush/rmqpush/message"
)

func main() {
	namesrv := flag.String("namesrv", "", "name server host:port of a real cluster (default: an embedded fake cluster)")
	topic := flag.String("topic", "QuickStartTopic", "topic to produce to and consume from")
	group := flag.String("group", "quickstart-group", "consumer group")
	count := flag.Int("n", 1000, "messages to produce and consume")
	flag.Parse()
	if err := run(*namesrv, *topic, *group, *count); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(namesrv, topic, group string, n int) error {
	env, err := demo.Setup(namesrv, topic)
	if err != nil {
		return err
	}
	defer env.Close()
	addr := env.NameServer

	// Produce n messages, each with a unique body.
	runID := strconv.FormatInt(time.Now().UnixNano(), 36)
	p, err := demo.NewProducer(addr)
	if err != nil {
		return err
	}
	ctx, cancel := demo.Deadline(time.Minute)
	defer cancel()
	for i := range n {
		m := &message.Message{Topic: topic, Body: []byte(fmt.Sprintf("%s hello #%d", runID, i))}
		m.Properties.Set(message.PropertyTags, "quickstart")
		if err := p.Send(ctx, m); err != nil {
			p.Close()
			return fmt.Errorf("produce: %w", err)
		}
	}
	p.Close()
	fmt.Printf("produced %d messages to %s\n", n, topic)

	// Consume them.
	var (
		mu       sync.Mutex
		seen     = map[string]int{}
		received atomic.Int64
		done     = make(chan struct{})
	)
	c, err := consumer.NewPushConsumer(group,
		consumer.WithNameServers(addr),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		return err
	}
	if err := c.Subscribe(topic, consumer.Tags("quickstart")); err != nil {
		return err
	}
	err = c.RegisterListener(consumer.ConcurrentlyFunc(func(_ context.Context, msgs []*message.Ext,
		_ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			body := string(m.Body)
			if len(body) < len(runID) || body[:len(runID)] != runID {
				continue // an earlier run's message (real broker)
			}
			seen[body]++
			if seen[body] == 1 && received.Add(1) == int64(n) {
				close(done)
			}
		}
		return consumer.ConsumeSuccess
	}))
	if err != nil {
		return err
	}
	start := time.Now()
	if err := c.Start(ctx); err != nil {
		return err
	}
	ticker := time.NewTicker(200 * time.Millisecond)
	defer ticker.Stop()
wait:
	for {
		select {
		case <-done:
			break wait
		case <-ticker.C:
			fmt.Printf("\rconsumed %d/%d", received.Load(), n)
		case <-ctx.Done():
			fmt.Println()
			_ = c.Shutdown(context.Background())
			return fmt.Errorf("only %d of %d messages consumed within a minute", received.Load(), n)
		}
	}
	took := time.Since(start)
	fmt.Printf("\rconsumed %d/%d in %v\n", received.Load(), n, took.Round(time.Millisecond))

	stats := c.Stats()
	if err := c.Shutdown(ctx); err != nil {
		return err
	}

	mu.Lock()
	dups := 0
	for _, k := range seen {
		dups += k - 1
	}
	mu.Unlock()
	fmt.Printf("summary: %d distinct messages, %d duplicates, %.0f msg/s\n", len(seen), dups, float64(len(seen))/took.Seconds())
	fmt.Println("committed offsets (persisted at shutdown):")
	queues := make([]message.Queue, 0, len(stats.Queues))
	for q := range stats.Queues {
		queues = append(queues, q)
	}
	slices.SortFunc(queues, message.Queue.Compare)
	for _, q := range queues {
		s := stats.Queues[q]
		brokerMax, lag := "?", "?" // no pull has told the broker's max offset yet
		if s.BrokerMaxOffset >= 0 {
			brokerMax, lag = strconv.FormatInt(s.BrokerMaxOffset, 10), strconv.FormatInt(s.Lag, 10)
		}
		fmt.Printf("  %-40s committed %5d  broker max %5s  lag %s\n", q, s.CommittedOffset, brokerMax, lag)
	}
	return nil
}
