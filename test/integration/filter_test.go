package integration

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// A MessageFilter keeps messages from the listener; they count as consumed (the offset
// moves past them) and Stats counts them.
func TestMessageFilter(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 2))
	b := c.Brokers()[0]
	want := produce(t, c, "t", "m", 40, "")
	got := newTally()
	odd := consumer.MessageFilterFunc(func(q message.Queue, m *message.Ext) bool {
		if q.Topic != "t" || m.Topic != "t" {
			panic("filter saw " + q.Topic + " / " + m.Topic)
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(string(m.Body), "m-"))
		return n%2 == 0
	})
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithMessageFilter(odd)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			got.add(msgs)
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 10*time.Second, "the even messages", func() bool { return got.distinct() == len(want)/2 })
	waitFor(t, 10*time.Second, "offsets past every message", func() bool {
		var sum int64
		for q, off := range b.CommittedOffsets("g") {
			if q.Topic == "t" {
				sum += off
			}
		}
		return sum == int64(len(want))
	})
	for _, w := range want {
		n, _ := strconv.Atoi(strings.TrimPrefix(w, "m-"))
		got.mu.Lock()
		require.Equal(t, n%2 == 0, got.counts[w] == 1, w)
		got.mu.Unlock()
	}
	require.Equal(t, int64(len(want)/2), pc.Stats().Topics["t"].FilteredMsgs)
}

// queueChange is one MessageQueueListener call.
type queueChange struct {
	topic     string
	all, mine []message.Queue
}

type queueChanges struct {
	mu  sync.Mutex
	got []queueChange
}

func (q *queueChanges) MessageQueueChanged(topic string, all, mine []message.Queue) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.got = append(q.got, queueChange{topic, all, mine})
}

// last returns the last change of topic.
func (q *queueChanges) last(topic string) (queueChange, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := len(q.got) - 1; i >= 0; i-- {
		if q.got[i].topic == topic {
			return q.got[i], true
		}
	}
	return queueChange{}, false
}

// The MessageQueueListener hears of each topic's queues after every rebalance that
// changed them, without the namespace: all of them at Start, half when a second member
// joins.
func TestMessageQueueListener(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("NsQ%Orders", 4))
	changes := &queueChanges{}
	noop := func(context.Context, []*message.Ext, *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
		return consumer.ConsumeSuccess
	}
	a := startConsumer(t, "g", "Orders", consumer.All(), fastOptions(c, consumer.WithNamespace("NsQ"),
		consumer.WithMessageQueueListener(changes), consumer.WithTakeoverGrace(0)), noop)
	defer shutdown(t, a)
	first, ok := changes.last("Orders")
	require.True(t, ok, "told at Start")
	require.Len(t, first.all, 4)
	require.Len(t, first.mine, 4)
	for _, q := range first.all {
		require.Equal(t, "Orders", q.Topic)
	}
	waitFor(t, 10*time.Second, "the retry topic reported too", func() bool {
		retry, ok := changes.last("%RETRY%g")
		return ok && len(retry.mine) == 1
	})

	b := startConsumer(t, "g", "Orders", consumer.All(), fastOptions(c, consumer.WithNamespace("NsQ"), consumer.WithTakeoverGrace(0)), noop)
	defer shutdown(t, b)
	waitFor(t, 10*time.Second, "the queues shared with the new member", func() bool {
		ch, _ := changes.last("Orders")
		return len(ch.mine) == 2 && len(ch.all) == 4
	})
}
