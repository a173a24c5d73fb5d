// Sqlfilter: subscribe with an SQL92 expression over message properties.
//
//	go run ./examples/sqlfilter                          # on an embedded fake cluster
//	go run ./examples/sqlfilter -namesrv 127.0.0.1:9876  # on a real broker
//
// Orders are produced with the user properties region and amount; the consumer
// subscribes to "region IN ('eu', 'us') AND amount > 100". The brokers filter, so a
// real broker must run with enablePropertyFilter=true in its broker.conf: without it
// Start fails, naming the broker and its refusal.
//
// Properties are strings on the broker. Compared with 100 (an int), amount is parsed as
// a Java int: an order whose amount reads "150.5" is not delivered (compare with 100.0
// to parse it as a double).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/examples/internal/demo"
	"github.com/rmqpush/rmqpush/message"
)

const (
	topic = "SqlFilterExampleTopic"
	group = "sqlfilter-example-group"
	expr  = "region IN ('eu', 'us') AND amount > 100"
)

func main() {
	namesrv := flag.String("namesrv", "", "name server host:port of a real cluster (default: an embedded fake cluster)")
	flag.Parse()
	if err := run(*namesrv); err != nil {
		fmt.Fprintln(os.Stderr, "sqlfilter:", err)
		os.Exit(1)
	}
}

// order is one produced message's properties.
type order struct {
	region, amount string
}

// selected says whether expr selects an order, the way the broker evaluates it.
func (o order) selected() bool {
	n, err := strconv.ParseInt(o.amount, 10, 32)
	return (o.region == "eu" || o.region == "us") && err == nil && n > 100
}

func run(namesrv string) error {
	env, err := demo.SetupFiltering(namesrv, topic)
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
	regions := []string{"eu", "us", "asia"}
	amounts := []string{"50", "150", "250", "100", "150.5"}
	want := 0
	for i := range 30 {
		o := order{region: regions[i%len(regions)], amount: amounts[i%len(amounts)]}
		m := &message.Message{Topic: topic, Body: []byte(fmt.Sprintf("%s order-%d", runID, i))}
		m.Properties.Set("region", o.region)
		m.Properties.Set("amount", o.amount)
		if err := p.Send(ctx, m); err != nil {
			p.Close()
			return err
		}
		if o.selected() {
			want++
		}
	}
	p.Close()
	fmt.Printf("produced 30 orders; %q selects %d of them\n", expr, want)

	var mu sync.Mutex
	var got []order
	done := make(chan struct{})
	c, err := consumer.NewPushConsumer(group,
		consumer.WithNameServers(env.NameServer),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		return err
	}
	if err := c.Subscribe(topic, consumer.SQL92(expr)); err != nil {
		return err
	}
	err = c.RegisterListener(consumer.ConcurrentlyFunc(func(_ context.Context, msgs []*message.Ext,
		_ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			if len(m.Body) > len(runID) && string(m.Body[:len(runID)]) == runID {
				region, _ := m.Properties.Get("region")
				amount, _ := m.Properties.Get("amount")
				got = append(got, order{region, amount})
				if len(got) == want {
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
		var refused *consumer.SubscriptionRefusedError
		if errors.As(err, &refused) {
			return fmt.Errorf("%w\n(a real broker filters SQL92 only with enablePropertyFilter=true in broker.conf)", err)
		}
		return err
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
	time.Sleep(200 * time.Millisecond) // an order the expression does not select would have arrived by now
	if err := c.Shutdown(ctx); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	for _, o := range got {
		fmt.Printf("consumed an order from %s of %s\n", o.region, o.amount)
		if !o.selected() {
			return fmt.Errorf("the expression does not select an order from %s of %s", o.region, o.amount)
		}
	}
	if len(got) != want {
		return fmt.Errorf("consumed %d orders, want %d", len(got), want)
	}
	fmt.Printf("consumed exactly the %d selected orders\n", want)
	return nil
}
