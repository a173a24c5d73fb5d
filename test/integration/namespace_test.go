package integration

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// nameFields are the ext fields of each request that carry a topic or group name.
var nameFields = map[int32][]string{
	protocol.RequestGetRouteInfoByTopic:    {"topic"},
	protocol.RequestGetConsumerListByGroup: {"consumerGroup"},
	protocol.RequestQueryConsumerOffset:    {"consumerGroup", "topic"},
	protocol.RequestUpdateConsumerOffset:   {"consumerGroup", "topic"},
	protocol.RequestPullMessage:            {"consumerGroup", "topic"},
	protocol.RequestConsumerSendMsgBack:    {"group", "originTopic"},
	protocol.RequestUnregisterClient:       {"consumerGroup"},
}

// names returns, for each request, its name fields as "field=value ..." (or, for a
// heartbeat, its groups and subscribed topics); requests without them are left out.
func names(t *testing.T, code int32, fields []remoting.Fields, bodies [][]byte) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for i, f := range fields {
		if code == protocol.RequestHeartBeat {
			var hb protocol.HeartbeatData
			require.NoError(t, hb.Decode(bodies[i]))
			for _, cd := range hb.ConsumerDataSet {
				var topics []string
				for _, sd := range cd.SubscriptionDataSet {
					topics = append(topics, sd.Topic)
				}
				slices.Sort(topics)
				out["group="+cd.GroupName+" topics="+strings.Join(topics, ",")] = true
			}
			continue
		}
		var kv []string
		for _, k := range nameFields[code] {
			if v, ok := f.Get(k); ok {
				kv = append(kv, k+"="+v)
			}
		}
		if len(kv) == len(nameFields[code]) {
			out[strings.Join(kv, " ")] = true
		}
	}
	return out
}

// goldenNamespaceRequests decodes the requests of the Java 4.9.8 consumer with
// namespace GoldenNs in ../shared/golden/j_namespace (0027-0098; 0013 is its producer's
// first send), by request code.
func goldenNamespaceRequests(t *testing.T) map[int32][]*remoting.Command {
	t.Helper()
	files, err := filepath.Glob("testdata/j_namespace/*.bin")
	require.NoError(t, err)
	require.Len(t, files, 37)
	out := map[int32][]*remoting.Command{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		cmd, err := remoting.DecodeFrame(raw)
		require.NoError(t, err, f)
		out[cmd.Code] = append(out[cmd.Code], cmd)
	}
	return out
}

// nsDelivery is what a listener saw of one message.
type nsDelivery struct {
	body, topic string
	queue       message.Queue
	reconsume   int32
}

type nsDeliveries struct {
	mu  sync.Mutex
	got []nsDelivery
}

func (d *nsDeliveries) add(m *message.Ext, q message.Queue) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, nsDelivery{body: string(m.Body), topic: m.Topic, queue: q, reconsume: m.ReconsumeTimes})
}

func (d *nsDeliveries) list() []nsDelivery {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.got)
}

func (d *nsDeliveries) has(body string, reconsume int32) bool {
	for _, x := range d.list() {
		if x.body == body && x.reconsume == reconsume {
			return true
		}
	}
	return false
}

// A consumer with WithNamespace("GoldenNs") puts on the wire the names the Java 4.9.8
// consumer of the j_namespace capture sent, in every request that names a topic or
// group (heartbeat, routes, consumer list, offsets, pulls, send-back, unregister), and
// in those the capture has no example of: the send-back's fallback send, running info
// and consume-directly. Its listener, Stats and hooks see the names without it.
func TestNamespaceOnTheWireAsJava(t *testing.T) {
	const wireTopic, wireGroup = "GoldenNs%GoldenJTopic", "GoldenNs%GoldenJGroup"
	golden := goldenNamespaceRequests(t)
	c := newCluster(t, fakebroker.WithTopic(wireTopic, 2), fastDelays())
	b := c.Brokers()[0]
	log := newRequestLog()
	seen := &nsDeliveries{}
	var failOnce sync.Map
	failOnce.Store("ns-1", true)
	failOnce.Store("ns-fallback", true)
	want := produce(t, c, wireTopic, "ns", 5, "TagNs")
	pc := startConsumer(t, "GoldenJGroup", "GoldenJTopic", consumer.All(),
		fastOptions(c, consumer.WithNamespace("GoldenNs"), consumer.WithRPCHook(log)),
		func(_ context.Context, msgs []*message.Ext, cc *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			for _, m := range msgs {
				seen.add(m, cc.Queue)
				if _, first := failOnce.LoadAndDelete(string(m.Body)); first {
					return consumer.ReconsumeLater
				}
			}
			return consumer.ConsumeSuccess
		})
	require.Equal(t, "GoldenJGroup", pc.Group())
	waitFor(t, 20*time.Second, "every message, and the retried one again", func() bool {
		return len(seen.list()) == len(want)+1 && seen.has("ns-1", 1)
	})

	// The fallback: send-back refused once, so a copy goes to the retry topic.
	_, err := b.Inject(fakebroker.Fault{Code: fakebroker.RequestConsumerSendMsgBack, Fail: fakebroker.ResponseSystemError, Times: 1})
	require.NoError(t, err)
	produced, err := c.Produce(wireTopic, &message.Message{Topic: wireTopic, Body: []byte("ns-fallback")})
	require.NoError(t, err)
	waitFor(t, 20*time.Second, "the message sent back by the fallback", func() bool { return seen.has("ns-fallback", 1) })

	for _, d := range seen.list() {
		require.Equal(t, "GoldenJTopic", d.topic, "the listener sees topics without the namespace: %+v", d)
		require.Contains(t, []string{"GoldenJTopic", "%RETRY%GoldenJGroup"}, d.queue.Topic, "and queues (a retry comes from the retry topic's queue): %+v", d)
	}

	// Admin calls come with the names on the wire.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	clientID := pc.ClientID()
	info, err := b.ConsumerRunningInfo(ctx, wireGroup, clientID, false)
	require.NoError(t, err)
	var subTopics []string
	for _, sd := range info.SubscriptionSet {
		subTopics = append(subTopics, sd.Topic)
	}
	require.ElementsMatch(t, []string{wireTopic, "%RETRY%" + wireGroup}, subTopics)
	require.Equal(t, wireGroup, info.Properties["consumerGroup"])
	for q := range info.MQTable {
		require.True(t, strings.HasPrefix(q.Topic, "GoldenNs%") || strings.HasPrefix(q.Topic, "%RETRY%GoldenNs%"), q.String())
	}
	res, err := b.ConsumeMessageDirectly(ctx, wireGroup, clientID, produced[0].OffsetMsgID)
	require.NoError(t, err)
	require.Equal(t, "CR_SUCCESS", res.ConsumeResult.String())
	require.Equal(t, "GoldenJTopic", seen.list()[len(seen.list())-1].topic, "consume-directly's message without the namespace")

	stats := pc.Stats()
	require.ElementsMatch(t, []string{"GoldenJTopic", "%RETRY%GoldenJGroup"}, slices.Collect(maps.Keys(stats.Topics)))
	for q := range stats.Queues {
		require.Contains(t, []string{"GoldenJTopic", "%RETRY%GoldenJGroup"}, q.Topic)
	}
	waitFor(t, 10*time.Second, "offsets committed in the namespace", func() bool {
		off0, ok0 := b.CommittedOffset(wireGroup, wireTopic, 0)
		off1, ok1 := b.CommittedOffset(wireGroup, wireTopic, 1)
		return ok0 && ok1 && off0+off1 == int64(len(want)+1)
	})
	shutdown(t, pc)

	// Every name the consumer sent, compared with Java's.
	for code := range nameFields {
		var ours, java []remoting.Fields
		for _, r := range log.of(code) {
			ours = append(ours, r.fields)
		}
		for _, cmd := range golden[code] {
			java = append(java, cmd.ExtFields)
		}
		got, exp := names(t, code, ours, nil), names(t, code, java, nil)
		require.NotEmpty(t, got, protocol.RequestName(code))
		if code == protocol.RequestGetRouteInfoByTopic {
			delete(exp, "topic=TBW102") // Java's inner producer's default topic
		}
		require.Equal(t, exp, got, protocol.RequestName(code))
	}
	var ourBodies, javaBodies [][]byte
	for _, r := range log.of(protocol.RequestHeartBeat) {
		ourBodies = append(ourBodies, r.body)
	}
	for _, cmd := range golden[protocol.RequestHeartBeat] {
		javaBodies = append(javaBodies, cmd.Body)
	}
	require.Equal(t, names(t, protocol.RequestHeartBeat, make([]remoting.Fields, len(javaBodies)), javaBodies),
		names(t, protocol.RequestHeartBeat, make([]remoting.Fields, len(ourBodies)), ourBodies), "heartbeat groups and topics")

	// The fallback send: Java's inner producer (CLIENT_INNER_PRODUCER, not in the
	// namespace) sends to the group's retry topic in it, with the original topic in
	// RETRY_TOPIC and the INSTANCE_ID every send of a namespaced Java client carries.
	sends := log.of(protocol.RequestSendMessageV2)
	require.Len(t, sends, 1)
	javaProps := message.PropertiesFromWire(golden[protocol.RequestSendMessageV2][0].ExtFields.Value("i"))
	props := message.PropertiesFromWire(sends[0].fields.Value("i"))
	require.Equal(t, "CLIENT_INNER_PRODUCER", sends[0].fields.Value("a"))
	require.Equal(t, "%RETRY%"+wireGroup, sends[0].fields.Value("b"))
	require.Equal(t, "TBW102", sends[0].fields.Value("c"))
	require.Equal(t, javaProps.Value(message.PropertyInstanceID), props.Value(message.PropertyInstanceID))
	require.Equal(t, wireTopic, props.Value(message.PropertyRetryTopic))
}

// An orderly consumer in a namespace locks and unlocks its queues under the wrapped
// names; its listener sees them without the namespace.
func TestNamespaceOrderlyLocks(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("NsO%Orders", 2))
	log := newRequestLog()
	want := produce(t, c, "NsO%Orders", "o", 10, "")
	got := newTally()
	var mu sync.Mutex
	var queues []string
	pc, err := consumer.NewPushConsumer("orderly", fastOptions(c, consumer.WithNamespace("NsO"), consumer.WithRPCHook(log))...)
	require.NoError(t, err)
	require.NoError(t, pc.Subscribe("Orders", consumer.All()))
	require.NoError(t, pc.RegisterListener(consumer.OrderlyFunc(func(_ context.Context, msgs []*message.Ext, oc *consumer.OrderlyContext) consumer.OrderlyStatus {
		got.add(msgs)
		mu.Lock()
		defer mu.Unlock()
		queues = append(queues, oc.Queue.Topic)
		for _, m := range msgs {
			queues = append(queues, m.Topic)
		}
		return consumer.OrderlySuccess
	})))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, pc.Start(ctx))
	waitFor(t, 10*time.Second, "every message", func() bool { return got.distinct() == len(want) })
	shutdown(t, pc)

	mu.Lock()
	require.NotEmpty(t, queues)
	for _, q := range queues {
		require.Equal(t, "Orders", q)
	}
	mu.Unlock()
	for _, code := range []int32{protocol.RequestLockBatchMQ, protocol.RequestUnlockBatchMQ} {
		sent := log.of(code)
		require.NotEmpty(t, sent, protocol.RequestName(code))
		for _, r := range sent {
			var body protocol.LockBatchRequest
			require.NoError(t, body.Decode(r.body))
			require.Equal(t, "NsO%orderly", body.ConsumerGroup)
			for _, q := range body.MQSet {
				require.Contains(t, []string{"NsO%Orders", "%RETRY%NsO%orderly"}, q.Topic)
			}
		}
	}
}

// A group in a namespace and a group of the same name without one, on topics of the
// same name, are different groups on different topics: neither sees the other's
// messages, retries or offsets.
func TestNamespaceIsolation(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("Orders", 2), fakebroker.WithTopic("NsA%Orders", 2), fastDelays())
	b := c.Brokers()[0]
	plainWant := produce(t, c, "Orders", "plain", 20, "")
	nsWant := produce(t, c, "NsA%Orders", "ns", 30, "")
	plainGot, nsGot := newTally(), newTally()
	var retried sync.Map
	listener := func(got *tally) func(context.Context, []*message.Ext, *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
		return func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			for _, m := range msgs {
				if m.Topic != "Orders" {
					panic("topic " + m.Topic)
				}
				if _, done := retried.LoadOrStore(string(m.Body), true); !done && strings.HasSuffix(string(m.Body), "-3") {
					return consumer.ReconsumeLater // one retry each, through each group's own retry topic
				}
			}
			got.add(msgs)
			return consumer.ConsumeSuccess
		}
	}
	plain := startConsumer(t, "shared", "Orders", consumer.All(), fastOptions(c), listener(plainGot))
	defer shutdown(t, plain)
	ns := startConsumer(t, "shared", "Orders", consumer.All(), fastOptions(c, consumer.WithNamespace("NsA")), listener(nsGot))
	defer shutdown(t, ns)

	waitFor(t, 20*time.Second, "both groups' messages", func() bool {
		return plainGot.distinct() == len(plainWant) && nsGot.distinct() == len(nsWant)
	})
	time.Sleep(200 * time.Millisecond) // anything crossing over would show up by now
	missing, _ := plainGot.check(plainWant)
	require.Zero(t, missing)
	require.Equal(t, len(plainWant), plainGot.distinct(), "the plain group got only its topic's messages")
	missing, _ = nsGot.check(nsWant)
	require.Zero(t, missing)
	require.Equal(t, len(nsWant), nsGot.distinct(), "the namespaced group got only its topic's messages")

	require.Len(t, c.RetryMessages("shared"), 1)
	require.Len(t, c.RetryMessages("NsA%shared"), 1)
	require.Equal(t, "plain-3", string(c.RetryMessages("shared")[0].Body))
	require.Equal(t, "ns-3", string(c.RetryMessages("NsA%shared")[0].Body))

	waitFor(t, 10*time.Second, "both groups' offsets at the end", func() bool {
		var plainSum, nsSum int64
		for q, off := range b.CommittedOffsets("shared") {
			if q.Topic == "Orders" {
				plainSum += off
			}
		}
		for q, off := range b.CommittedOffsets("NsA%shared") {
			if q.Topic == "NsA%Orders" {
				nsSum += off
			}
		}
		return plainSum == int64(len(plainWant)) && nsSum == int64(len(nsWant))
	})
	for q := range b.CommittedOffsets("shared") {
		require.Contains(t, []string{"Orders", "%RETRY%shared"}, q.Topic, "the plain group has offsets of its own topics only")
	}
	for q := range b.CommittedOffsets("NsA%shared") {
		require.Contains(t, []string{"NsA%Orders", "%RETRY%NsA%shared"}, q.Topic, "the namespaced group has offsets of its own topics only")
	}
	require.ElementsMatch(t, b.Clients("shared"), []string{plain.ClientID()})
	require.ElementsMatch(t, b.Clients("NsA%shared"), []string{ns.ClientID()})
}
