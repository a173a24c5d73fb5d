// POP: more consumers than queues, with RocketMQ 5's POP consumption.
//
//	go run ./examples/pop                          # on an embedded fake 5.x cluster
//	go run ./examples/pop -namesrv 127.0.0.1:9876  # on a real RocketMQ 5.x cluster
//
// Four members of one group consume a topic that has one queue on each of two brokers.
// With client rebalancing two of them would get a queue each and two nothing; with
// WithClientRebalance(false) and the group set to POP by the operator, the brokers hand
// messages out one pop at a time, so all four consume. One message fails once: it is
// made invisible for its retry delay and comes back, from the group's POP retry topic,
// with ReconsumeTimes 1.
//
// On a real cluster, first create the topic and set the group's consume mode (every
// member pops every queue with -q 0):
//
//	mqadmin updateTopic -c DefaultCluster -t PopExampleTopic -r 1 -w 1
//	mqadmin setConsumeMode -c DefaultCluster -g pop-example-group -t PopExampleTopic -m POP -q 0
//
// A real broker keeps the failed message invisible 10 s (Java's first popDelayLevel)
// and revives it a second or two later; the embedded cluster takes a fraction of that.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/examples/internal/demo"
	"github.com/rmqpush/rmqpush/message"
)

const (
	topic   = "PopExampleTopic"
	group   = "pop-example-group"
	members = 4
)

func main() {
	namesrv := flag.String("namesrv", "", "name server host:port of a real 5.x cluster (default: an embedded fake cluster)")
	count := flag.Int("n", 400, "messages to produce and consume")
	flag.Parse()
	if err := run(*namesrv, *count); err != nil {
		fmt.Fprintln(os.Stderr, "pop:", err)
		os.Exit(1)
	}
}

func run(namesrv string, n int) error {
	env, err := demo.SetupPOP(namesrv, group, topic, 1)
	if err != nil {
		return err
	}
	defer env.Close()
	ctx, cancel := demo.Deadline(3 * time.Minute)
	defer cancel()

	var (
		mu       sync.Mutex
		seen     = map[string]bool{}
		perMem   [members]atomic.Int64
		retried  = make(chan string, 1)
		done     = make(chan struct{})
		runTag   = fmt.Sprint(time.Now().UnixNano())
		failedAt time.Time
	)
	opts := []consumer.Option{
		consumer.WithNameServers(env.NameServer),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithClientRebalance(false), // the brokers assign queues, and say POP
		consumer.WithRebalanceInterval(2 * time.Second),
	}
	if env.Fake != nil {
		// The embedded cluster: a short retry delay and long poll, so the example takes
		// seconds. Real brokers get Java's defaults (10 s, 15 s).
		opts = append(opts, consumer.WithPopDelayLevels(300*time.Millisecond), consumer.WithLongPollTime(300*time.Millisecond))
	}
	var cs []*consumer.PushConsumer
	defer func() {
		for _, c := range cs {
			_ = c.Shutdown(context.Background())
		}
	}()
	for i := range members {
		c, err := consumer.NewPushConsumer(group, append(opts, consumer.WithInstanceName(fmt.Sprint("member-", i)))...)
		if err != nil {
			return err
		}
		if err := c.Subscribe(topic, consumer.Tags(runTag)); err != nil {
			return err
		}
		err = c.RegisterListener(consumer.ConcurrentlyFunc(func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			m := msgs[0]
			mu.Lock()
			defer mu.Unlock()
			if string(m.Body) == "fails once" && m.ReconsumeTimes == 0 {
				failedAt = time.Now()
				fmt.Printf("member %d: %q failed (ReconsumeLater)\n", i, m.Body)
				return consumer.ReconsumeLater
			}
			if string(m.Body) == "fails once" {
				retried <- fmt.Sprintf("member %d: %q back after %v with ReconsumeTimes=%d, topic %s",
					i, m.Body, time.Since(failedAt).Round(10*time.Millisecond), m.ReconsumeTimes, m.Topic)
			}
			perMem[i].Add(1)
			seen[string(m.Body)] = true
			if len(seen) == n+1 {
				close(done)
			}
			return consumer.ConsumeSuccess
		}))
		if err != nil {
			return err
		}
		if err := c.Start(ctx); err != nil {
			return err
		}
		cs = append(cs, c)
	}
	popped := 0
	for q := range cs[0].Stats().Queues {
		if q.QueueID == -1 { // a POP queue: any queue of the topic on one broker
			popped++
		}
	}
	fmt.Printf("%d members started; each pops every queue of %d broker(s)\n", members, popped)

	p, err := demo.NewProducer(env.NameServer)
	if err != nil {
		return err
	}
	defer p.Close()
	send := func(body string) error {
		m := &message.Message{Topic: topic, Body: []byte(body)}
		m.Properties.Set(message.PropertyTags, runTag)
		return p.Send(ctx, m)
	}
	if err := send("fails once"); err != nil {
		return err
	}
	for i := range n {
		if err := send(fmt.Sprint("message ", i)); err != nil {
			return err
		}
	}
	select {
	case line := <-retried:
		fmt.Println(line)
	case <-ctx.Done():
		return fmt.Errorf("the failed message did not come back")
	}
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("timed out with %d of %d messages", len(seen), n+1)
	}
	for _, c := range cs {
		if err := c.Shutdown(ctx); err != nil { // acks flushed
			return err
		}
	}
	for i, c := range cs {
		st := c.Stats().Pop
		fmt.Printf("member %d consumed %4d: popped %d, acked %d in %d requests, retried %d\n",
			i, perMem[i].Load(), st.Popped, st.Acked, st.Requests.Acks+st.Requests.BatchAcks, st.Retried)
	}
	cs = nil
	fmt.Printf("done: %d messages consumed by %d members\n", n+1, members)
	return nil
}
