package client

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a Consumer that records what the instance tells it.
type recorder struct {
	group    string
	topics   []string
	notified atomic.Int32
	routes   atomic.Int32
	mu       sync.Mutex
	resets   map[message.Queue]int64
	direct   []*message.Ext
}

func (r *recorder) ConsumerData() protocol.ConsumerData {
	cd := protocol.ConsumerData{GroupName: r.group, ConsumeType: protocol.ConsumePassively,
		MessageModel: protocol.Clustering, ConsumeFromWhere: protocol.ConsumeFromFirstOffset}
	for _, t := range r.topics {
		sd, _ := protocol.BuildSubscription(t, "*")
		sd.SubVersion = 1
		cd.SubscriptionDataSet = append(cd.SubscriptionDataSet, sd)
	}
	return cd
}
func (r *recorder) OnConsumerIDsChanged() { r.notified.Add(1) }
func (r *recorder) OnRouteChanged(string) { r.routes.Add(1) }
func (r *recorder) ResetOffset(_ context.Context, _ string, offsets map[message.Queue]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resets = offsets
}
func (r *recorder) RunningInfo() *protocol.ConsumerRunningInfo {
	return &protocol.ConsumerRunningInfo{Properties: map[string]string{"k": "v"}}
}
func (r *recorder) ConsumeMessageDirectly(_ context.Context, m *message.Ext, _ string) *protocol.ConsumeMessageDirectlyResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.direct = append(r.direct, m)
	return &protocol.ConsumeMessageDirectlyResult{ConsumeResult: protocol.CRSuccess}
}
func (r *recorder) ConsumerStatus(string) map[message.Queue]int64 {
	return map[message.Queue]int64{{Topic: "t", BrokerName: "broker-a", QueueID: 0}: 3}
}

func newTestInstance(t *testing.T, nameServers ...string) *Instance {
	t.Helper()
	inst, err := New(Config{NameServers: nameServers, ClientID: "127.0.0.1@test", RequestTimeout: 2 * time.Second})
	require.NoError(t, err)
	require.NoError(t, inst.Start())
	t.Cleanup(inst.Shutdown)
	return inst
}

func newTestCluster(t *testing.T, opts ...fakebroker.Opt) *fakebroker.Cluster {
	t.Helper()
	c, err := fakebroker.NewCluster(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestRoutesFailoverAndBrokerAddresses(t *testing.T) {
	c := newTestCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic("t", 4))
	// A dead name server first: the instance fails over to the live one and keeps it.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	deadAddr := dead.Addr().String()
	require.NoError(t, dead.Close())
	inst := newTestInstance(t, deadAddr, c.NameServerAddr())
	ctx := context.Background()

	changed, err := inst.UpdateTopicRoute(ctx, "t")
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, []string{c.NameServerAddr(), deadAddr}, inst.nameServer.order(), "the live one is tried first from now on")
	changed, err = inst.UpdateTopicRoute(ctx, "t")
	require.NoError(t, err)
	require.False(t, changed, "the same route again")

	qs, ok := inst.Queues("t")
	require.True(t, ok)
	require.Len(t, qs, 8)
	for _, b := range c.Brokers() {
		addr, slave, found := inst.FindBrokerAddr(b.Name(), MasterID, true)
		require.True(t, found)
		require.False(t, slave)
		require.Equal(t, b.Addr(), addr)
	}
	_, _, found := inst.FindBrokerAddr("nope", MasterID, false)
	require.False(t, found)

	_, err = inst.UpdateTopicRoute(ctx, "missing")
	require.ErrorIs(t, err, protocol.ResponseCodeError(protocol.ResponseTopicNotExist))
}

func TestHeartbeatNotifyAndUnregister(t *testing.T) {
	c := newTestCluster(t, fakebroker.WithTopic("t", 2))
	b := c.Brokers()[0]
	inst := newTestInstance(t, c.NameServerAddr())
	rec := &recorder{group: "g", topics: []string{"t"}}
	require.NoError(t, inst.Register("g", rec))
	require.Error(t, inst.Register("g", rec), "one consumer per group")
	ctx := context.Background()
	_, err := inst.UpdateTopicRoute(ctx, "t")
	require.NoError(t, err)
	n, err := inst.SendHeartbeat(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []string{"127.0.0.1@test"}, b.Clients("g"))
	require.Eventually(t, func() bool { return rec.notified.Load() > 0 }, 5*time.Second, 5*time.Millisecond,
		"the broker's NOTIFY_CONSUMER_IDS_CHANGED reaches the consumer")
	ids, err := inst.ConsumerIDs(ctx, "t", "g")
	require.NoError(t, err)
	require.Equal(t, []string{"127.0.0.1@test"}, ids)

	require.NoError(t, inst.Unregister(ctx, "g"))
	require.Empty(t, b.Clients("g"))
	require.Equal(t, 1, b.Requests(protocol.RequestUnregisterClient))
}

func TestOffsetCalls(t *testing.T) {
	c := newTestCluster(t, fakebroker.WithTopic("t", 1))
	b := c.Brokers()[0]
	q := message.Queue{Topic: "t", BrokerName: b.Name(), QueueID: 0}
	inst := newTestInstance(t, c.NameServerAddr())
	ctx := context.Background()
	produced, err := b.Produce("t", 0, &message.Message{Topic: "t", Body: []byte("a")}, &message.Message{Topic: "t", Body: []byte("b")})
	require.NoError(t, err)

	max, err := inst.MaxOffset(ctx, q)
	require.NoError(t, err)
	require.Equal(t, int64(2), max)
	min, err := inst.MinOffset(ctx, q)
	require.NoError(t, err)
	require.Equal(t, int64(0), min)
	off, err := inst.SearchOffset(ctx, q, 0)
	require.NoError(t, err)
	require.Equal(t, int64(0), off)

	require.NoError(t, inst.UpdateConsumerOffset(ctx, "g", q, 1))
	got, found, err := inst.QueryConsumerOffset(ctx, "g", q)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, int64(1), got)

	// A failure that is not QUERY_NOT_FOUND is an error, never "not found".
	_, err = b.Inject(fakebroker.Fault{Code: protocol.RequestQueryConsumerOffset, Fail: protocol.ResponseSystemBusy, Times: 1})
	require.NoError(t, err)
	_, found, err = inst.QueryConsumerOffset(ctx, "g", q)
	require.ErrorIs(t, err, protocol.ResponseCodeError(protocol.ResponseSystemBusy))
	require.False(t, found)
	var be *protocol.BrokerError
	require.True(t, errors.As(err, &be))
	require.Equal(t, b.Addr(), be.Addr)
	_ = produced
}

func TestSendBackFallbackAndDeadLetter(t *testing.T) {
	c := newTestCluster(t, fakebroker.WithTopic("t", 1), fakebroker.WithDelayScale(0.0001))
	b := c.Brokers()[0]
	inst := newTestInstance(t, c.NameServerAddr())
	rec := &recorder{group: "g", topics: []string{"t"}}
	require.NoError(t, inst.Register("g", rec))
	ctx := context.Background()
	_, err := inst.UpdateTopicRoute(ctx, "t")
	require.NoError(t, err)
	_, err = inst.SendHeartbeat(ctx) // creates %RETRY%g on the broker
	require.NoError(t, err)
	_, err = b.Produce("t", 0, &message.Message{Topic: "t", Body: []byte("x")})
	require.NoError(t, err)
	m := b.Messages("t", 0)[0]
	m.BrokerName = b.Name()

	require.NoError(t, inst.SendMessageBack(ctx, "g", m, 0, 16))
	require.Eventually(t, func() bool { return len(c.RetryMessages("g")) == 1 }, 5*time.Second, 5*time.Millisecond)

	require.NoError(t, inst.SendRetryMessage(ctx, "g", m, 16))
	require.Eventually(t, func() bool { return len(c.RetryMessages("g")) == 2 }, 5*time.Second, 5*time.Millisecond)
	retry := c.RetryMessages("g")[1]
	require.Equal(t, "t", retry.Property(message.PropertyRetryTopic))
	require.Equal(t, m.MsgID(), retry.Property(message.PropertyOriginMessageID))
	require.Equal(t, int32(1), retry.ReconsumeTimes)

	// Send-back failing: SendToDeadLetter still gets the message to the DLQ.
	_, err = b.Inject(fakebroker.Fault{Code: protocol.RequestConsumerSendMsgBack, Fail: protocol.ResponseSystemError, Times: 1})
	require.NoError(t, err)
	m.ReconsumeTimes = 3
	require.NoError(t, inst.SendToDeadLetter(ctx, "g", m, 3))
	require.NoError(t, inst.SendToDeadLetter(ctx, "g", m, 3))
	require.Len(t, c.DLQMessages("g"), 2, "through the fallback copy, then through send-back with level -1")
}

func TestLocksAndBrokerRequests(t *testing.T) {
	c := newTestCluster(t, fakebroker.WithTopic("t", 2))
	b := c.Brokers()[0]
	inst := newTestInstance(t, c.NameServerAddr())
	rec := &recorder{group: "g", topics: []string{"t"}}
	require.NoError(t, inst.Register("g", rec))
	ctx := context.Background()
	_, err := inst.UpdateTopicRoute(ctx, "t")
	require.NoError(t, err)
	_, err = inst.SendHeartbeat(ctx)
	require.NoError(t, err)
	q0 := message.Queue{Topic: "t", BrokerName: b.Name(), QueueID: 0}
	q1 := message.Queue{Topic: "t", BrokerName: b.Name(), QueueID: 1}

	locked, err := inst.LockBatch(ctx, "g", b.Name(), []message.Queue{q0, q1})
	require.NoError(t, err)
	require.ElementsMatch(t, []message.Queue{q0, q1}, locked)
	require.Equal(t, map[message.Queue]string{q0: "127.0.0.1@test", q1: "127.0.0.1@test"}, b.Locks("g"))
	require.NoError(t, inst.UnlockBatch(ctx, "g", b.Name(), []message.Queue{q0}))
	require.Equal(t, map[message.Queue]string{q1: "127.0.0.1@test"}, b.Locks("g"))

	info, err := b.ConsumerRunningInfo(ctx, "g", "127.0.0.1@test", false)
	require.NoError(t, err)
	require.Equal(t, "v", info.Properties["k"])

	produced, err := b.Produce("t", 0, &message.Message{Topic: "t", Body: []byte("direct")})
	require.NoError(t, err)
	res, err := b.ConsumeMessageDirectly(ctx, "g", "127.0.0.1@test", produced[0].OffsetMsgID)
	require.NoError(t, err)
	require.Equal(t, protocol.CRSuccess, res.ConsumeResult)
	rec.mu.Lock()
	require.Len(t, rec.direct, 1)
	require.Equal(t, "direct", string(rec.direct[0].Body))
	rec.mu.Unlock()

	status, err := b.ConsumerStatus(ctx, "g", "t", "")
	require.NoError(t, err)
	require.Equal(t, int64(3), status["127.0.0.1@test"][q0])

	// The broker resets only a group that has offsets on the topic.
	require.NoError(t, inst.UpdateConsumerOffset(ctx, "g", q0, 1))
	require.NoError(t, inst.UpdateConsumerOffset(ctx, "g", q1, 0))
	_, err = b.ResetOffsetByTime("g", "t", 0, true)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.resets) == 2
	}, 5*time.Second, 5*time.Millisecond, "the reset reaches the consumer")
}

func TestShutdownFailsCallsWithErrClosed(t *testing.T) {
	c := newTestCluster(t, fakebroker.WithTopic("t", 1))
	inst, err := New(Config{NameServers: []string{c.NameServerAddr()}, ClientID: "127.0.0.1@x"})
	require.NoError(t, err)
	require.NoError(t, inst.Start())
	inst.Shutdown()
	inst.Shutdown()
	_, err = inst.UpdateTopicRoute(context.Background(), "t")
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, inst.Start(), ErrClosed)
	_, err = New(Config{ClientID: "x"})
	require.Error(t, err)
}
