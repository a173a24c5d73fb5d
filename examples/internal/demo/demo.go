// Package demo holds what the examples share: an embedded fake cluster unless a name
// server is given, and a tiny producer to fill topics.
package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// Env is where an example runs.
type Env struct {
	NameServer string
	// Fake is the embedded cluster, or nil on a real one.
	Fake *fakebroker.Cluster
}

// Close closes the embedded cluster, if any.
func (e *Env) Close() {
	if e.Fake != nil {
		_ = e.Fake.Close()
	}
}

// Setup returns the environment: the real cluster of namesrv when given, else an
// embedded fake cluster of two brokers serving each topic with 4 queues per broker and
// delay levels a hundred times shorter than real ones.
func Setup(namesrv string, topics ...string) (*Env, error) {
	return setup(namesrv, nil, topics)
}

// SetupFiltering is Setup with the embedded brokers filtering SQL92 subscriptions, as
// real ones do with enablePropertyFilter=true.
func SetupFiltering(namesrv string, topics ...string) (*Env, error) {
	return setup(namesrv, []fakebroker.Opt{fakebroker.WithPropertyFilter(true)}, topics)
}

// SetupPOP is Setup with RocketMQ 5.3.3 brokers (each serving the topic with
// queuesPerBroker queues) on which the operator set group to consume topic by POP, every
// member popping every queue (mqadmin setConsumeMode -m POP -q 0). On a real cluster the
// operator does that beforehand.
func SetupPOP(namesrv, group, topic string, queuesPerBroker int) (*Env, error) {
	env, err := setupQueues(namesrv, []fakebroker.Opt{fakebroker.WithRocketMQ5(true)}, queuesPerBroker, []string{topic})
	if err != nil || env.Fake == nil {
		return env, err
	}
	if err := env.Fake.SetConsumeMode(group, topic, "POP", 0); err != nil {
		env.Close()
		return nil, err
	}
	return env, nil
}

func setup(namesrv string, extra []fakebroker.Opt, topics []string) (*Env, error) {
	return setupQueues(namesrv, extra, 4, topics)
}

func setupQueues(namesrv string, extra []fakebroker.Opt, queues int, topics []string) (*Env, error) {
	if namesrv != "" {
		return &Env{NameServer: namesrv}, nil
	}
	opts := append([]fakebroker.Opt{fakebroker.WithBrokers(2), fakebroker.WithDelayScale(0.01)}, extra...)
	for _, t := range topics {
		opts = append(opts, fakebroker.WithTopic(t, queues))
	}
	c, err := fakebroker.NewCluster(opts...)
	if err != nil {
		return nil, err
	}
	fmt.Printf("embedded fake RocketMQ cluster: name server %s, brokers", c.NameServerAddr())
	for _, b := range c.Brokers() {
		fmt.Printf(" %s=%s", b.Name(), b.Addr())
	}
	fmt.Println()
	return &Env{NameServer: c.NameServerAddr(), Fake: c}, nil
}

// Producer sends messages round robin over a topic's writable queues.
type Producer struct {
	inst *client.Instance
	seq  int
	// Queue, when not negative, sends every message to the topic's queue with that
	// index (in sorted order), so that one consumer batch can hold several of them.
	Queue int
}

// NewProducer returns a producer talking to namesrv.
func NewProducer(namesrv string) (*Producer, error) {
	inst, err := client.New(client.Config{NameServers: []string{namesrv}, ClientID: "127.0.0.1@rmqpush-example-producer"})
	if err != nil {
		return nil, err
	}
	return &Producer{inst: inst, Queue: -1}, nil
}

// Send stores msgs in msg.Topic (which must exist).
func (p *Producer) Send(ctx context.Context, msgs ...*message.Message) error {
	for _, m := range msgs {
		qs, ok := p.inst.WritableQueues(m.Topic)
		if !ok {
			if _, err := p.inst.UpdateTopicRoute(ctx, m.Topic); err != nil {
				return fmt.Errorf("topic %s: %w (on a real broker, create it first: mqadmin updateTopic -t %s -c DefaultCluster)", m.Topic, err, m.Topic)
			}
			qs, _ = p.inst.WritableQueues(m.Topic)
		}
		if len(qs) == 0 {
			return fmt.Errorf("topic %s has no writable queue", m.Topic)
		}
		q := qs[p.seq%len(qs)]
		if p.Queue >= 0 {
			q = qs[p.Queue%len(qs)]
		}
		p.seq++
		if _, err := p.inst.SendMessage(ctx, "rmqpush-example-producer", q, m); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the producer's connections.
func (p *Producer) Close() { p.inst.Shutdown() }

// Deadline returns a context for one example step.
func Deadline(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
