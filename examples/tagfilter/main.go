// Tagfilter: subscribe to some tags of a topic.
//
//	go run ./examples/tagfilter                          # on an embedded fake cluster
//	go run ./examples/tagfilter -namesrv 127.0.0.1:9876  # on a real broker
//
// Messages tagged "created", "paid" and "shipped" are produced; the consumer subscribes
// to "created || paid". The broker filters by the tags' hash codes; the consumer checks
// the tags themselves, since hash codes can collide.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/examples/internal/demo"
	"github.com/rmqpush/rmqpush/message"
)

const (
	topic = "TagFilterExampleTopic"
	group = "tagfilter-example-group"
)

func main() {
	namesrv := flag.String("namesrv", "", "name server host:port of a real cluster (default: an embedded fake cluster)")
	flag.Parse()
	if err := run(*namesrv); err != nil {
		fmt.Fprintln(os.Stderr, "tagfilter:", err)
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
	produced := map[string]int{}
	for i := range 30 {
		tag := []string{"created", "paid", "shipped"}[i%3]
		m := &message.Message{Topic: topic, Body: []byte(fmt.Sprintf("%s order-%d %s", runID, i/3, tag))}
		m.Properties.Set(message.PropertyTags, tag)
		if err := p.Send(ctx, m); err != nil {
			p.Close()
			return err
		}
		produced[tag]++
	}
	p.Close()
	fmt.Printf("produced %v\n", produced)

	var mu sync.Mutex
	got := map[string]int{}
	done := make(chan struct{})
	c, err := consumer.NewPushConsumer(group,
		consumer.WithNameServers(env.NameServer),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		return err
	}
	if err := c.Subscribe(topic, consumer.Tags("created", "paid")); err != nil {
		return err
	}
	err = c.RegisterListener(consumer.ConcurrentlyFunc(func(_ context.Context, msgs []*message.Ext,
		_ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			if len(m.Body) > len(runID) && string(m.Body[:len(runID)]) == runID {
				got[m.Tags()]++
				if got["created"]+got["paid"] == 20 {
					close(done)
				}
			}
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
	case <-done:
	case <-ctx.Done():
	}
	time.Sleep(200 * time.Millisecond) // a "shipped" message would have arrived by now
	if err := c.Shutdown(ctx); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	tags := make([]string, 0, len(got))
	for t := range got {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	for _, t := range tags {
		fmt.Printf("consumed %2d messages tagged %q\n", got[t], t)
	}
	if got["shipped"] != 0 {
		return fmt.Errorf("got %d messages tagged shipped", got["shipped"])
	}
	fmt.Println("no message tagged \"shipped\" reached the listener")
	return nil
}
