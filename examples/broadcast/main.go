// Broadcast: every member of a broadcasting group gets every message.
//
//	go run ./examples/broadcast                          # on an embedded fake cluster
//	go run ./examples/broadcast -namesrv 127.0.0.1:9876  # on a real broker
//
// Two consumers of one group in broadcasting mode each consume all 20 messages. Their
// offsets live in local files (here under a temporary directory), which a restarted
// member reads to resume where it stopped.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/examples/internal/demo"
	"github.com/rmqpush/rmqpush/message"
)

const (
	topic = "BroadcastExampleTopic"
	group = "broadcast-example-group"
	n     = 20
)

func main() {
	namesrv := flag.String("namesrv", "", "name server host:port of a real cluster (default: an embedded fake cluster)")
	flag.Parse()
	if err := run(*namesrv); err != nil {
		fmt.Fprintln(os.Stderr, "broadcast:", err)
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
	dir, err := os.MkdirTemp("", "rmqpush-broadcast-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	runID := time.Now().Format("150405.000")
	var wg sync.WaitGroup
	var members []*consumer.PushConsumer
	for _, name := range []string{"member-1", "member-2"} {
		var mu sync.Mutex
		got := map[string]bool{}
		wg.Add(1)
		c, err := consumer.NewPushConsumer(group,
			consumer.WithNameServers(env.NameServer),
			consumer.WithMessageModel(consumer.Broadcasting),
			consumer.WithConsumeFromWhere(consumer.ConsumeFromLastOffset),
			consumer.WithInstanceName(name),
			consumer.WithOffsetStoreDir(dir))
		if err != nil {
			return err
		}
		if err := c.Subscribe(topic, consumer.All()); err != nil {
			return err
		}
		err = c.RegisterListener(consumer.ConcurrentlyFunc(func(_ context.Context, msgs []*message.Ext,
			_ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range msgs {
				if len(got) < n && !got[string(m.Body)] && len(m.Body) > len(runID) && string(m.Body[:len(runID)]) == runID {
					got[string(m.Body)] = true
					if len(got) == n {
						fmt.Printf("%s consumed all %d messages\n", name, n)
						wg.Done()
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
		members = append(members, c)
	}

	p, err := demo.NewProducer(env.NameServer)
	if err != nil {
		return err
	}
	for i := range n {
		if err := p.Send(ctx, &message.Message{Topic: topic, Body: []byte(fmt.Sprintf("%s #%d", runID, i))}); err != nil {
			p.Close()
			return err
		}
	}
	p.Close()
	fmt.Printf("produced %d messages\n", n)

	wait := make(chan struct{})
	go func() { wg.Wait(); close(wait) }()
	select {
	case <-wait:
	case <-ctx.Done():
		return fmt.Errorf("timed out")
	}
	for _, c := range members {
		if err := c.Shutdown(ctx); err != nil {
			return err
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", group, "offsets.json"))
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		data, _ := os.ReadFile(f)
		fmt.Printf("offsets file %s: %d bytes, Java-readable fastjson\n", rel, len(data))
	}
	return nil
}
