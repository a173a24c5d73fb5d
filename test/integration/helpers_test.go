package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newCluster starts a fake cluster closed at the end of the test.
func newCluster(t *testing.T, opts ...fakebroker.Opt) *fakebroker.Cluster {
	t.Helper()
	c, err := fakebroker.NewCluster(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// produce sends n messages with bodies "<prefix>-<i>" to topic, round robin over its
// queues, and returns the bodies.
func produce(t *testing.T, c *fakebroker.Cluster, topic, prefix string, n int, tag string) []string {
	t.Helper()
	bodies := make([]string, 0, n)
	const chunk = 256
	for i := 0; i < n; i += chunk {
		var msgs []*message.Message
		for j := i; j < min(i+chunk, n); j++ {
			m := &message.Message{Topic: topic, Body: []byte(fmt.Sprintf("%s-%d", prefix, j))}
			if tag != "" {
				m.Properties.Set(message.PropertyTags, tag)
			}
			msgs = append(msgs, m)
			bodies = append(bodies, string(m.Body))
		}
		_, err := c.Produce(topic, msgs...)
		require.NoError(t, err)
	}
	return bodies
}

// tally counts deliveries per body.
type tally struct {
	mu     sync.Mutex
	counts map[string]int
	total  int
}

func newTally() *tally { return &tally{counts: map[string]int{}} }

func (t *tally) add(msgs []*message.Ext) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range msgs {
		t.counts[string(m.Body)]++
		t.total++
	}
}

// addOne counts a delivery of m and returns how many there were of its body.
func (t *tally) addOne(m *message.Ext) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counts[string(m.Body)]++
	t.total++
	return t.counts[string(m.Body)]
}

// requireOnceBut checks that every body delivered, but except, was delivered once.
func (t *tally) requireOnceBut(tt *testing.T, except string) {
	tt.Helper()
	t.mu.Lock()
	defer t.mu.Unlock()
	for body, n := range t.counts {
		if body != except {
			require.Equal(tt, 1, n, "%s was delivered more than once", body)
		}
	}
}

// missing returns how many of want were never delivered, and the duplicates.
func (t *tally) check(want []string) (missing, dups int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, w := range want {
		switch n := t.counts[w]; {
		case n == 0:
			missing++
		case n > 1:
			dups += n - 1
		}
	}
	return missing, dups
}

func (t *tally) deliveries() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

func (t *tally) distinct() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.counts)
}

// fastOptions are consumer options that make tests quick.
func fastOptions(c *fakebroker.Cluster, extra ...consumer.Option) []consumer.Option {
	return append([]consumer.Option{
		consumer.WithNameServers(c.NameServerAddr()),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithRebalanceInterval(time.Second),
		consumer.WithPersistConsumerOffsetInterval(200 * time.Millisecond),
		consumer.WithHeartbeatInterval(time.Second),
		consumer.WithPollNameServerInterval(time.Second),
	}, extra...)
}

// startConsumer starts a concurrent consumer of topic calling fn.
func startConsumer(t *testing.T, group, topic string, sel consumer.Selector, opts []consumer.Option,
	fn func(context.Context, []*message.Ext, *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus) *consumer.PushConsumer {
	t.Helper()
	pc, err := consumer.NewPushConsumer(group, opts...)
	require.NoError(t, err)
	require.NoError(t, pc.Subscribe(topic, sel))
	require.NoError(t, pc.RegisterListener(consumer.ConcurrentlyFunc(fn)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, pc.Start(ctx))
	return pc
}

func shutdown(t *testing.T, pc *consumer.PushConsumer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, pc.Shutdown(ctx))
}

// waitFor polls cond until it holds or the timeout passes. The explain functions, if
// any, say what the state was when it timed out.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool, explain ...func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			var state []string
			for _, e := range explain {
				state = append(state, e())
			}
			t.Fatalf("timed out after %v waiting for %s %s", timeout, what, strings.Join(state, "; "))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
