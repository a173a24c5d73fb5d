// Orderly: the events of each order are consumed in the order they were produced.
//
//	go run ./examples/orderly                          # on an embedded fake cluster
//	go run ./examples/orderly -namesrv 127.0.0.1:9876  # on a real broker
//
// Five orders each go through created → paid → shipped → delivered. Every event of an
// order is sent to the same queue (chosen by hashing the order id), and an orderly
// listener consumes each queue one batch at a time, in offset order, while this client
// holds the queue's lock on the broker. The first attempt at every "paid" event fails
// (SuspendCurrentQueueAMoment): its queue waits and retries it, and nothing behind it
// in that queue overtakes it.
package main

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/examples/internal/demo"
	"github.com/rmqpush/rmqpush/message"
)

const (
	topic = "OrderlyExampleTopic"
	group = "orderly-example-group"
)

var steps = []string{"created", "paid", "shipped", "delivered"}

func main() {
	namesrv := flag.String("namesrv", "", "name server host:port of a real cluster (default: an embedded fake cluster)")
	flag.Parse()
	if err := run(*namesrv); err != nil {
		fmt.Fprintln(os.Stderr, "orderly:", err)
		os.Exit(1)
	}
}

func run(namesrv string) error {
	env, err := demo.Setup(namesrv, topic)
	if err != nil {
		return err
	}
	defer env.Close()
	ctx, cancel := demo.Deadline(time.Minute)
	defer cancel()

	runID := time.Now().Format("150405.000")
	p, err := demo.NewProducer(env.NameServer)
	if err != nil {
		return err
	}
	orders := []string{"order-1", "order-2", "order-3", "order-4", "order-5"}
	for _, step := range steps {
		for _, order := range orders {
			h := fnv.New32a()
			h.Write([]byte(order))
			p.Queue = int(h.Sum32() % 1024) // the same queue for every event of an order
			m := &message.Message{Topic: topic, Body: []byte(runID + " " + order + " " + step)}
			m.Properties.Set(message.PropertyKeys, order)
			if err := p.Send(ctx, m); err != nil {
				p.Close()
				return err
			}
		}
	}
	p.Close()
	fmt.Printf("produced %d events for %d orders\n", len(steps)*len(orders), len(orders))

	var (
		mu      sync.Mutex
		seen    = map[string][]string{}
		failed  = map[string]bool{}
		done    = make(chan struct{})
		pending = len(steps) * len(orders)
	)
	c, err := consumer.NewPushConsumer(group,
		consumer.WithNameServers(env.NameServer),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithSuspendCurrentQueueTime(200*time.Millisecond))
	if err != nil {
		return err
	}
	if err := c.Subscribe(topic, consumer.All()); err != nil {
		return err
	}
	err = c.RegisterListener(consumer.OrderlyFunc(func(_ context.Context, msgs []*message.Ext,
		oc *consumer.OrderlyContext) consumer.OrderlyStatus {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			fields := strings.Fields(string(m.Body))
			if len(fields) != 3 || fields[0] != runID {
				continue // an earlier run's message (real broker)
			}
			order, step := fields[1], fields[2]
			if step == "paid" && !failed[order] {
				failed[order] = true
				fmt.Printf("%s  %-8s %-9s queue %d: failing once; the queue waits\n", time.Now().Format("15:04:05.000"), order, step, oc.Queue.QueueID)
				return consumer.SuspendCurrentQueueAMoment
			}
			seen[order] = append(seen[order], step)
			fmt.Printf("%s  %-8s %-9s queue %d offset %d\n", time.Now().Format("15:04:05.000"), order, step, oc.Queue.QueueID, m.QueueOffset)
			if pending--; pending == 0 {
				close(done)
			}
		}
		return consumer.OrderlySuccess
	}))
	if err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
	if err := c.Shutdown(ctx); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	for _, order := range orders {
		if !slices.Equal(seen[order], steps) {
			return fmt.Errorf("%s: events consumed as %v, want %v", order, seen[order], steps)
		}
	}
	fmt.Printf("every order's events were consumed in order: %s\n", strings.Join(steps, " → "))
	return nil
}
