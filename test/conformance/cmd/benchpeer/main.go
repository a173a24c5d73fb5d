// Command benchpeer is the benchmark's worker for rocketmq-client-go (the peer): one
// push consumer whose listener only counts (and, in latency mode, reads the send time
// from each body). It is started by cmd/bench; see package benchkit for its flags and
// output. The peer's process-global logger is replaced by one that prints only errors
// and only when BENCH_PEER_ERRORS is set.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/rmqpush/rmqpush/test/conformance/internal/benchkit"
)

type client struct{ pc rocketmq.PushConsumer }

func (c *client) Start(o benchkit.Options, sink *benchkit.Sink) error {
	from := consumer.ConsumeFromFirstOffset
	if o.FromLast {
		from = consumer.ConsumeFromLastOffset
	}
	opts := []consumer.Option{
		consumer.WithNameServer([]string{o.NameServer}),
		consumer.WithGroupName(o.Group),
		consumer.WithInstance(o.Instance),
		consumer.WithConsumeFromWhere(from),
	}
	if o.PullBatch > 0 {
		opts = append(opts, consumer.WithPullBatchSize(int32(o.PullBatch)))
	}
	if o.ConsumeBatch > 0 {
		opts = append(opts, consumer.WithConsumeMessageBatchMaxSize(o.ConsumeBatch))
	}
	pc, err := rocketmq.NewPushConsumer(opts...)
	if err != nil {
		return err
	}
	timing := sink.Timing()
	err = pc.Subscribe(o.Topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		if timing {
			now := time.Now().UnixNano()
			for _, m := range msgs {
				sink.Observe(m.Body, now)
			}
		}
		sink.Add(len(msgs))
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		return err
	}
	if err := pc.Start(); err != nil {
		return err
	}
	c.pc = pc
	return nil
}

func (c *client) Shutdown(context.Context) error { return c.pc.Shutdown() }

// quiet is an rlog.Logger that drops everything but errors, and those unless asked.
type quiet struct{ errors bool }

func (quiet) Debug(string, map[string]interface{})   {}
func (quiet) Info(string, map[string]interface{})    {}
func (quiet) Warning(string, map[string]interface{}) {}
func (q quiet) Error(msg string, fields map[string]interface{}) {
	if q.errors {
		fmt.Fprintf(os.Stderr, "peer error: %s %v\n", msg, fields)
	}
}
func (quiet) Fatal(msg string, fields map[string]interface{}) {
	fmt.Fprintf(os.Stderr, "peer fatal: %s %v\n", msg, fields)
}
func (quiet) Level(string)            {}
func (quiet) OutputPath(string) error { return nil }

func main() {
	rlog.SetLogger(quiet{errors: os.Getenv("BENCH_PEER_ERRORS") != ""})
	os.Exit(benchkit.Main("peer", &client{}, os.Args[1:], os.Stdout, os.Stderr))
}
