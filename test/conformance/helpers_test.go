package conformance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// Request codes of the RocketMQ remoting protocol (Java's RequestCode), written out here
// rather than taken from rmqpush's own protocol package: this module checks that package's
// reading of the protocol, so it does not borrow it.
const (
	codeSendMessage            = 10
	codeUpdateConsumerOffset   = 15
	codeHeartBeat              = 34
	codeConsumerSendMsgBack    = 36
	codeGetConsumerListByGroup = 38
	codeLockBatchMQ            = 41
	codeUnlockBatchMQ          = 42
	codeGetRouteInfoByTopic    = 105
	codeSendBatchMessage       = 320
)

// waitLong bounds every wait for the peer: generous, since the peer's own timers are
// seconds long (offsets are first persisted 10 s after start, then every 5 s) and the
// machine may be busy. The waits end as soon as their condition holds.
const waitLong = 40 * time.Second

// poll is how often waits look again.
const poll = 20 * time.Millisecond

// newCluster starts a fake cluster that the test closes when it ends.
func newCluster(t *testing.T, opts ...fakebroker.Opt) *fakebroker.Cluster {
	t.Helper()
	c, err := fakebroker.NewCluster(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// uniqueName returns prefix with a random suffix: group and instance names must differ
// between runs and between the parallel tests, since the peer keeps one client per
// client id in a process-global map.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%08x", prefix, rand.Uint32())
}

// startProducer starts a peer producer on the cluster; the test shuts it down.
func startProducer(t *testing.T, c *fakebroker.Cluster, group string) rocketmq.Producer {
	t.Helper()
	p, err := rocketmq.NewProducer(
		producer.WithNameServer([]string{c.NameServerAddr()}),
		producer.WithGroupName(group),
		producer.WithInstanceName(group),
		producer.WithRetry(0), // a refused send must show, not be retried elsewhere
	)
	require.NoError(t, err)
	require.NoError(t, p.Start())
	t.Cleanup(func() { require.NoError(t, p.Shutdown()) })
	return p
}

// peerConsumer is a started peer push consumer.
type peerConsumer struct {
	rocketmq.PushConsumer
	group    string
	instance string
	once     sync.Once
}

// stop shuts the consumer down once; the test's cleanup calls it too.
func (p *peerConsumer) stop(t *testing.T) {
	t.Helper()
	p.once.Do(func() { require.NoError(t, p.Shutdown()) })
}

// clientID waits until broker b lists the consumer as a member of its group and returns
// the client id it registered with (the peer's is "<local IP>@<instance>").
func (p *peerConsumer) clientID(t *testing.T, b *fakebroker.Broker) string {
	t.Helper()
	var id string
	require.Eventually(t, func() bool {
		for _, c := range b.Clients(p.group) {
			if strings.HasSuffix(c, "@"+p.instance) {
				id = c
				return true
			}
		}
		return false
	}, waitLong, poll, "consumer %s never registered in group %s on %s", p.instance, p.group, b.Name())
	return id
}

// peerRaces says why the tests that run the peer's push consumer skip themselves under
// the race detector: a race anywhere in the process fails the test that is running, and
// rocketmq-client-go's push consumer has data races of its own (README.md lists them).
// Under -race they would test the peer, not the fake broker, and fail at random.
const peerRaces = "rocketmq-client-go's push consumer has data races of its own (see README.md); " +
	"run this module without -race"

// startConsumer starts a peer push consumer of group (instance names its client) that
// subscribes to topic with listener; the test shuts it down. Under the race detector it
// skips the test (see peerRaces).
func startConsumer(t *testing.T, c *fakebroker.Cluster, group, instance, topic string,
	listener func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error),
	opts ...consumer.Option) *peerConsumer {
	t.Helper()
	if raceDetector {
		t.Skip(peerRaces)
	}
	all := append([]consumer.Option{
		consumer.WithNameServer([]string{c.NameServerAddr()}),
		consumer.WithGroupName(group),
		consumer.WithInstance(instance),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	}, opts...)
	pc, err := rocketmq.NewPushConsumer(all...)
	require.NoError(t, err)
	require.NoError(t, pc.Subscribe(topic, consumer.MessageSelector{}, listener))
	require.NoError(t, pc.Start())
	p := &peerConsumer{PushConsumer: pc, group: group, instance: instance}
	t.Cleanup(func() { p.stop(t) })
	return p
}

// delivery is one message as a peer listener received it.
type delivery struct {
	consumer       string // the instance that received it
	topic          string
	broker         string
	queueID        int
	queueOffset    int64
	body           string
	msgID          string
	reconsumeTimes int32
	props          map[string]string
	at             time.Time
}

// collector records what the peer's listeners receive.
type collector struct {
	mu  sync.Mutex
	all []delivery
}

// listener returns a peer listener for the consumer named instance that records every
// message and answers what result says for it (nil: success).
func (c *collector) listener(instance string, result func(*primitive.MessageExt) consumer.ConsumeResult) func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
	return func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		now := time.Now()
		out := consumer.ConsumeSuccess
		c.mu.Lock()
		for _, m := range msgs {
			d := delivery{
				consumer:       instance,
				topic:          m.Topic,
				queueOffset:    m.QueueOffset,
				body:           string(m.Body),
				msgID:          m.MsgId,
				reconsumeTimes: m.ReconsumeTimes,
				props:          m.GetProperties(),
				at:             now,
			}
			if m.Queue != nil {
				d.broker, d.queueID = m.Queue.BrokerName, m.Queue.QueueId
			}
			c.all = append(c.all, d)
			if result != nil && result(m) != consumer.ConsumeSuccess {
				out = consumer.ConsumeRetryLater
			}
		}
		c.mu.Unlock()
		return out, nil
	}
}

// deliveries returns a copy of what was received so far.
func (c *collector) deliveries() []delivery {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.all)
}

// byBody groups the deliveries by message body.
func (c *collector) byBody() map[string][]delivery {
	out := make(map[string][]delivery)
	for _, d := range c.deliveries() {
		out[d.body] = append(out[d.body], d)
	}
	return out
}

// missing returns the bodies of want that no listener received yet.
func (c *collector) missing(want []string) []string {
	got := c.byBody()
	var out []string
	for _, b := range want {
		if len(got[b]) == 0 {
			out = append(out, b)
		}
	}
	return out
}

// waitAll waits until every body of want was received at least once.
func (c *collector) waitAll(t *testing.T, want []string) {
	t.Helper()
	var left []string
	ok := assertEventually(func() bool {
		left = c.missing(want)
		return len(left) == 0
	})
	require.True(t, ok, "%d of %d messages never consumed, e.g. %q", len(left), len(want), first(left, 5))
}

// assertEventually polls cond until it holds or waitLong passes, and reports which.
func assertEventually(cond func() bool) bool {
	deadline := time.Now().Add(waitLong)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(poll)
	}
	return true
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

// produceBodies stores n messages with bodies "<prefix>-<i>" in topic through the fake
// (round robin over the topic's queues on every broker) and returns the bodies.
func produceBodies(t *testing.T, c *fakebroker.Cluster, topic, prefix string, n int) []string {
	t.Helper()
	bodies := make([]string, n)
	msgs := make([]*message.Message, n)
	for i := range n {
		bodies[i] = fmt.Sprintf("%s-%d", prefix, i)
		msgs[i] = &message.Message{Body: []byte(bodies[i])}
	}
	_, err := c.Produce(topic, msgs...)
	require.NoError(t, err)
	return bodies
}

// queuesOf asks a connected consumer for its running info through broker b
// (GET_CONSUMER_RUNNING_INFO) and returns the queues of topic it consumes, sorted.
func queuesOf(t *testing.T, b *fakebroker.Broker, group, clientID, topic string) []message.Queue {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := b.ConsumerRunningInfo(ctx, group, clientID, false)
	require.NoError(t, err)
	var out []message.Queue
	for q, pq := range info.MQTable {
		if q.Topic == topic && !pq.Dropped {
			out = append(out, q)
		}
	}
	slices.SortFunc(out, message.Queue.Compare)
	return out
}

// allQueues returns the queues of topic on every broker of c, sorted.
func allQueues(c *fakebroker.Cluster, topic string) []message.Queue {
	var out []message.Queue
	for _, b := range c.Brokers() {
		ti, ok := b.Topic(topic)
		if !ok {
			continue
		}
		for q := range ti.ReadQueues {
			out = append(out, message.Queue{Topic: topic, BrokerName: b.Name(), QueueID: int32(q)})
		}
	}
	slices.SortFunc(out, message.Queue.Compare)
	return out
}

// waitCommitted waits until group's committed offset of every queue of topic on every
// broker equals the queue's max offset, and fails naming the queues that lag.
func waitCommitted(t *testing.T, c *fakebroker.Cluster, group, topic string) {
	t.Helper()
	var lag []string
	ok := assertEventually(func() bool {
		lag = lag[:0]
		for _, q := range allQueues(c, topic) {
			b := c.Broker(q.BrokerName)
			maxOff := b.MaxOffset(topic, int(q.QueueID))
			off, found := b.CommittedOffset(group, topic, int(q.QueueID))
			if !found || off != maxOff {
				lag = append(lag, fmt.Sprintf("%s committed %d (found %v), max %d", q, off, found, maxOff))
			}
		}
		return len(lag) == 0
	})
	require.True(t, ok, "committed offsets of %s never reached the max offsets: %v", group, lag)
}
