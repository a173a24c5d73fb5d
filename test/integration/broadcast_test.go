package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/offset"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

func TestBroadcastingEveryMemberGetsEverythingAndResumesFromItsFile(t *testing.T) {
	// 24 queues: more than the 16 queues Shutdown releases at once (a file that lost
	// queues at shutdown went unnoticed with 4).
	c := newCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic("t", 12))
	dir := t.TempDir()
	want := produce(t, c, "t", "m", 300, "")
	opts := func(instance string) []consumer.Option {
		return fastOptions(c, consumer.WithMessageModel(consumer.Broadcasting),
			consumer.WithOffsetStoreDir(dir), consumer.WithInstanceName(instance), consumer.WithClientIP("192.0.2.9"))
	}
	tallies := []*tally{newTally(), newTally()}
	var members []*consumer.PushConsumer
	for i, name := range []string{"one", "two"} {
		tl := tallies[i]
		members = append(members, startConsumer(t, "bg", "t", consumer.All(), opts(name),
			func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
				tl.add(msgs)
				if string(msgs[0].Body) == "m-7" {
					return consumer.ReconsumeLater // broadcasting drops failures and moves on
				}
				return consumer.ConsumeSuccess
			}))
	}
	for _, tl := range tallies {
		waitFor(t, 20*time.Second, "every message at every member", func() bool { return tl.distinct() == len(want) })
	}
	for _, m := range members {
		shutdown(t, m)
	}
	for _, tl := range tallies {
		missing, dups := tl.check(want)
		require.Zero(t, missing)
		require.Zero(t, dups)
	}
	for _, name := range []string{"one", "two"} {
		st, err := offset.NewLocalStore(dir, "192.0.2.9@"+name, "bg")
		require.NoError(t, err)
		require.NoError(t, st.Load())
		saved := st.Table()
		for _, b := range c.Brokers() {
			for q := range 12 {
				mq := message.Queue{Topic: "t", BrokerName: b.Name(), QueueID: int32(q)}
				require.Equal(t, b.MaxOffset("t", q), saved[mq], "%s: %s in the offsets file", name, mq)
			}
		}
	}
	file := filepath.Join(dir, "192.0.2.9@one", "bg", "offsets.json")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Contains(t, string(data), `"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"t"}:`)
	require.Empty(t, c.RetryMessages("bg"), "broadcasting never sends back")

	// A restart resumes from the file: only new messages arrive.
	more := produce(t, c, "t", "late", 50, "")
	again := newTally()
	pc := startConsumer(t, "bg", "t", consumer.All(), opts("one"),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			again.add(msgs)
			return consumer.ConsumeSuccess
		})
	waitFor(t, 20*time.Second, "the new messages", func() bool { return again.distinct() == len(more) })
	shutdown(t, pc)
	missing, dups := again.check(more)
	require.Zero(t, missing)
	require.Zero(t, dups)
	require.Equal(t, len(more), again.distinct(), "nothing old is consumed again")
}
