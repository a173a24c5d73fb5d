// Package rmqworker is the benchmark's rmqpush client, shared by cmd/benchrmqpush and
// by the worker that measures the metrics and tracing plugins (cmd/benchhooks).
package rmqworker

import (
	"context"
	"time"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/conformance/internal/benchkit"
)

// Client runs one rmqpush push consumer whose listener only counts (and, in latency
// mode, reads the send time from each body), with Hooks installed.
type Client struct {
	Hooks []consumer.Hook // installed with consumer.WithHooks; none for the plain worker
	// Pop consumes by POP: the brokers assign the queues (WithClientRebalance(false)),
	// and the group must be set to POP on them.
	Pop bool
	// Orderly registers an OrderlyListener instead of a ConcurrentlyListener: the queues
	// are locked on the brokers and each is consumed one call at a time.
	Orderly bool
	// Extra options, applied after the others.
	Extra []consumer.Option

	pc *consumer.PushConsumer
}

// Start starts consuming (benchkit.Client).
func (c *Client) Start(o benchkit.Options, sink *benchkit.Sink) error {
	from := consumer.ConsumeFromFirstOffset
	if o.FromLast {
		from = consumer.ConsumeFromLastOffset
	}
	opts := []consumer.Option{
		consumer.WithNameServers(o.NameServer),
		consumer.WithInstanceName(o.Instance),
		consumer.WithConsumeFromWhere(from),
	}
	if len(c.Hooks) > 0 {
		opts = append(opts, consumer.WithHooks(c.Hooks...))
	}
	if c.Pop {
		opts = append(opts, consumer.WithClientRebalance(false))
	}
	if o.PullBatch > 0 {
		opts = append(opts, consumer.WithPullBatchSize(o.PullBatch), consumer.WithPopBatchSize(min(o.PullBatch, 32)))
	}
	if o.ConsumeBatch > 0 {
		opts = append(opts, consumer.WithConsumeMessageBatchMaxSize(o.ConsumeBatch))
	}
	pc, err := consumer.NewPushConsumer(o.Group, append(opts, c.Extra...)...)
	if err != nil {
		return err
	}
	if err := pc.Subscribe(o.Topic, consumer.All()); err != nil {
		return err
	}
	timing := sink.Timing()
	count := func(msgs []*message.Ext) {
		if timing {
			now := time.Now().UnixNano()
			for _, m := range msgs {
				sink.Observe(m.Body, now)
			}
		}
		sink.Add(len(msgs))
	}
	var listener any = consumer.ConcurrentlyFunc(func(_ context.Context, msgs []*message.Ext,
		_ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
		count(msgs)
		return consumer.ConsumeSuccess
	})
	if c.Orderly {
		listener = consumer.OrderlyFunc(func(_ context.Context, msgs []*message.Ext, _ *consumer.OrderlyContext) consumer.OrderlyStatus {
			count(msgs)
			return consumer.OrderlySuccess
		})
	}
	if err := pc.RegisterListener(listener); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pc.Start(ctx); err != nil {
		return err
	}
	c.pc = pc
	return nil
}

// Shutdown stops the consumer (benchkit.Client).
func (c *Client) Shutdown(ctx context.Context) error { return c.pc.Shutdown(ctx) }

// Turnaround reports the consumer's pull turnaround (benchkit.TurnaroundReporter).
func (c *Client) Turnaround() (int64, time.Duration, time.Duration) {
	t := c.pc.Stats().PullTurnaround
	return t.Count, t.P50, t.P99
}
