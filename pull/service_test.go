package pull

import (
	"context"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/offset"
	"github.com/rmqpush/rmqpush/processqueue"
	"github.com/rmqpush/rmqpush/remoting"
)

// pullCall is one pull the service sent, waiting for the test to answer it.
type pullCall struct {
	addr string
	h    protocol.PullMessageRequest
	src  remoting.BodySource
	cb   func(*client.PullResult, error)
}

// fakeBroker answers FindBrokerAddr from a table and hands every pull to the test.
type fakeBroker struct {
	calls     chan pullCall
	mu        sync.Mutex
	addrs     map[int64]string
	refreshes int
}

func newFakeBroker() *fakeBroker {
	return &fakeBroker{calls: make(chan pullCall, 16), addrs: map[int64]string{0: "127.0.0.1:10911", 1: "127.0.0.1:10912"}}
}

func (b *fakeBroker) FindBrokerAddr(_ string, id int64, _ bool) (string, bool, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a, ok := b.addrs[id]; ok {
		return a, id != 0, true
	}
	a, ok := b.addrs[0]
	return a, false, ok
}

func (b *fakeBroker) PullAsync(addr string, h *protocol.PullMessageRequest, _ time.Duration, src remoting.BodySource, cb func(*client.PullResult, error)) error {
	b.calls <- pullCall{addr: addr, h: *h, src: src, cb: cb}
	return nil
}

func (b *fakeBroker) HeartbeatSoon() {}

func (b *fakeBroker) RequestRouteRefresh() {
	b.mu.Lock()
	b.refreshes++
	b.mu.Unlock()
}

// recorder is the Dispatcher. It takes a reference to each lease it is given, as one
// listener call would, and keeps the leases for the test to release.
type recorder struct {
	mu     sync.Mutex
	got    []*message.Ext
	leases []*Lease
	seen   chan struct{}
}

func (d *recorder) Dispatch(_ *Request, msgs []*message.Ext, _ bool, lease *Lease) {
	lease.Acquire(1)
	d.mu.Lock()
	d.got = append(d.got, msgs...)
	d.leases = append(d.leases, lease)
	d.mu.Unlock()
	d.seen <- struct{}{}
}

type subs map[string]protocol.SubscriptionData

func (s subs) Subscription(topic string) (protocol.SubscriptionData, bool) {
	sd, ok := s[topic]
	return sd, ok
}

var testQueue = message.Queue{Topic: "t", BrokerName: "broker-a", QueueID: 1}

// body encodes store records for offsets [from, to) of testQueue with the given tag.
func body(t *testing.T, topic string, from, to int64, tag string, props ...message.Property) []byte {
	t.Helper()
	var b []byte
	for off := from; off < to; off++ {
		m := &message.Ext{
			Message:     message.Message{Topic: topic, Body: []byte("m" + strconv.FormatInt(off, 10))},
			QueueID:     testQueue.QueueID,
			QueueOffset: off,
			StoreHost:   netip.MustParseAddrPort("127.0.0.1:10911"),
			BornHost:    netip.MustParseAddrPort("127.0.0.1:5000"),
		}
		if tag != "" {
			m.Properties.Set(message.PropertyTags, tag)
		}
		for _, p := range props {
			m.Properties.Set(p.Name, p.Value)
		}
		var err error
		b, err = message.AppendStoreRecord(b, m)
		require.NoError(t, err)
	}
	return b
}

type harness struct {
	svc     *Service
	broker  *fakeBroker
	disp    *recorder
	offsets *offset.RemoteStore
	limits  Limits
	illegal chan int64
}

func newHarness(t *testing.T, mutate func(*Config)) *harness {
	t.Helper()
	h := &harness{broker: newFakeBroker(), disp: &recorder{seen: make(chan struct{}, 16)},
		offsets: offset.NewRemoteStore("g", nil), limits: Limits{Count: 1000, SizeMiB: 100, MaxSpan: 2000},
		illegal: make(chan int64, 1)}
	sd, err := protocol.BuildSubscription("t", "a || b")
	require.NoError(t, err)
	sd.SubVersion = 42
	retry, err := protocol.BuildSubscription("%RETRY%g", "*")
	require.NoError(t, err)
	cfg := Config{
		Group: "g", Broker: h.broker, Dispatcher: h.disp,
		Subs:      subs{"t": sd, "%RETRY%g": retry},
		Offsets:   h.offsets,
		Limits:    func(message.Queue) Limits { return h.limits },
		BatchSize: 32, SuspendTimeout: 15 * time.Second, CallTimeout: 30 * time.Second,
		Clustering:      true,
		OnOffsetIllegal: func(_ *Request, next int64) { h.illegal <- next },
	}
	if mutate != nil {
		mutate(&cfg)
	}
	h.svc, err = New(cfg)
	require.NoError(t, err)
	h.svc.Start()
	t.Cleanup(h.svc.Stop)
	return h
}

func (h *harness) nextCall(t *testing.T) pullCall {
	t.Helper()
	select {
	case c := <-h.broker.calls:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no pull sent")
		return pullCall{}
	}
}

func (h *harness) noCall(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case c := <-h.broker.calls:
		t.Fatalf("unexpected pull at offset %d", c.h.QueueOffset)
	case <-time.After(within):
	}
}

func TestPullFoundCachesDispatchesAndPullsAgain(t *testing.T) {

	h := newHarness(t, nil)
	pq := processqueue.New(time.Now())
	h.svc.Submit(NewRequest(testQueue, pq, 10))

	c := h.nextCall(t)
	require.Equal(t, "127.0.0.1:10911", c.addr)
	require.Equal(t, protocol.PullMessageRequest{
		ConsumerGroup: "g", Topic: "t", QueueID: 1, QueueOffset: 10, MaxMsgNums: 32,
		SysFlag: protocol.PullSysFlagSuspend, SuspendTimeoutMillis: 15000, SubVersion: 42,
		ExpressionType: "TAG", BrokerName: "broker-a",
	}, c.h, "no commit flag while no offset is stored; the subscription comes from the heartbeat")

	b := append(body(t, "t", 10, 12, "a"), body(t, "t", 12, 13, "zzz")...)
	b = append(b, body(t, "t", 13, 14, "b")...)
	h.offsets.Update(testQueue, 11, true) // as if the consume service had committed up to 11
	c.cb(&client.PullResult{Status: client.PullFound, NextBeginOffset: 14, MinOffset: 0, MaxOffset: 20, Body: b}, nil)
	<-h.disp.seen
	h.disp.mu.Lock()
	require.Len(t, h.disp.got, 3, "the message tagged zzz is filtered out")
	for i, want := range []int64{10, 11, 13} {
		m := h.disp.got[i]
		require.Equal(t, want, m.QueueOffset)
		require.Equal(t, "broker-a", m.BrokerName)
		require.Equal(t, "20", m.Property(message.PropertyMaxOffset))
		require.Equal(t, "0", m.Property(message.PropertyMinOffset))
	}
	h.disp.mu.Unlock()
	require.Equal(t, int64(3), pq.Count())
	require.Equal(t, int64(20), pq.BrokerMaxOffset())

	c = h.nextCall(t)
	require.Equal(t, int64(14), c.h.QueueOffset, "pulls again at nextBeginOffset")
	require.Equal(t, protocol.PullSysFlagSuspend|protocol.PullSysFlagCommitOffset, c.h.SysFlag)
	require.Equal(t, int64(11), c.h.CommitOffset, "the in-memory offset rides on the pull")

	// The broker suggests a slave: the next pull goes there, without the commit flag.
	c.cb(&client.PullResult{Status: client.PullNoNewMsg, NextBeginOffset: 14, MaxOffset: 20, SuggestWhichBrokerID: 1}, nil)
	c = h.nextCall(t)
	require.Equal(t, "127.0.0.1:10912", c.addr)
	require.Equal(t, protocol.PullSysFlagSuspend, c.h.SysFlag)
	c.cb(nil, context.Canceled) // the service retries after an error; Stop ends it
}

func TestPullNoNewMessageCorrectsOffsetOnlyWhenNothingCached(t *testing.T) {

	h := newHarness(t, nil)
	pq := processqueue.New(time.Now())
	r := NewRequest(testQueue, pq, 5)
	r.Lease = h.offsets.Begin(testQueue)
	h.svc.Submit(r)
	c := h.nextCall(t)
	c.cb(&client.PullResult{Status: client.PullNoMatchedMsg, NextBeginOffset: 9}, nil)
	c = h.nextCall(t)
	require.Equal(t, int64(9), c.h.QueueOffset)
	require.Equal(t, int64(9), h.offsets.Table()[testQueue], "nothing cached: everything before 9 is done")

	pq.Put([]*message.Ext{{QueueOffset: 9}}, -1)
	c.cb(&client.PullResult{Status: client.PullNoNewMsg, NextBeginOffset: 12}, nil)
	c = h.nextCall(t)
	require.Equal(t, int64(12), c.h.QueueOffset)
	require.Equal(t, int64(9), h.offsets.Table()[testQueue], "offset 9 is cached, so the offset may not move")
	pq.SetDropped(true)
	c.cb(&client.PullResult{Status: client.PullNoNewMsg, NextBeginOffset: 12}, nil)
	h.noCall(t, 100*time.Millisecond)
}

func TestPullOffsetIllegalDropsTheQueue(t *testing.T) {

	h := newHarness(t, nil)
	pq := processqueue.New(time.Now())
	h.svc.Submit(NewRequest(testQueue, pq, 1000))
	c := h.nextCall(t)
	c.cb(&client.PullResult{Status: client.PullOffsetIllegal, NextBeginOffset: 20, MinOffset: 0, MaxOffset: 20}, nil)
	require.Equal(t, int64(20), <-h.illegal)
	require.True(t, pq.Dropped())
	h.noCall(t, 100*time.Millisecond)
}

func TestPullFlowControlHoldsBack(t *testing.T) {

	h := newHarness(t, nil)
	h.limits = Limits{Count: 2, SizeMiB: 100, MaxSpan: 2000}
	pq := processqueue.New(time.Now())
	pq.Put([]*message.Ext{{QueueOffset: 1}, {QueueOffset: 2}, {QueueOffset: 3}}, -1)
	r := NewRequest(testQueue, pq, 4)
	h.svc.Submit(r)
	h.noCall(t, 200*time.Millisecond) // 3 cached > 2: held back, retried every 50 ms
	pq.Remove([]*message.Ext{{QueueOffset: 1}, {QueueOffset: 2}})
	c := h.nextCall(t)
	require.Equal(t, int64(4), c.h.QueueOffset)
	pq.SetDropped(true)
	c.cb(&client.PullResult{Status: client.PullNoNewMsg, NextBeginOffset: 4}, nil)
}

func TestPullSpanFlowControlOnlyForConcurrent(t *testing.T) {

	for _, orderly := range []bool{false, true} {
		h := newHarness(t, func(c *Config) { c.Orderly = orderly; c.Clustering = false })
		h.limits = Limits{Count: 1000, SizeMiB: 100, MaxSpan: 10}
		pq := processqueue.New(time.Now())
		pq.Put([]*message.Ext{{QueueOffset: 1}, {QueueOffset: 100}}, -1)
		h.svc.Submit(NewRequest(testQueue, pq, 101))
		if orderly {
			c := h.nextCall(t)
			pq.SetDropped(true)
			c.cb(&client.PullResult{Status: client.PullNoNewMsg, NextBeginOffset: 101}, nil)
		} else {
			h.noCall(t, 150*time.Millisecond)
			pq.SetDropped(true)
		}
		h.svc.Stop()
	}
}

func TestPullErrorsRetryLater(t *testing.T) {

	h := newHarness(t, nil)
	pq := processqueue.New(time.Now())
	h.svc.Submit(NewRequest(testQueue, pq, 0))
	c := h.nextCall(t)
	begin := time.Now()
	c.cb(nil, &protocol.BrokerError{Addr: "x", RequestCode: protocol.RequestPullMessage, Code: protocol.ResponseFlowControl})
	c = h.nextCall(t)
	flowDelay := time.Since(begin)
	begin = time.Now()
	c.cb(nil, &protocol.BrokerError{Addr: "x", RequestCode: protocol.RequestPullMessage, Code: protocol.ResponseSystemBusy})
	c = h.nextCall(t)
	require.GreaterOrEqual(t, time.Since(begin), DelayError, "any other error waits a second")
	require.Less(t, flowDelay, DelayError, "broker flow control waits 20 ms, not a second")
	pq.SetDropped(true)
	c.cb(&client.PullResult{Status: client.PullNoNewMsg}, nil)
}

func TestPullBadRecordKeepsWhatDecodedAndRetriesFromIt(t *testing.T) {

	h := newHarness(t, nil)
	pq := processqueue.New(time.Now())
	h.svc.Submit(NewRequest(testQueue, pq, 0))
	c := h.nextCall(t)
	b := body(t, "t", 0, 3, "a")
	b = append(b, 0, 0, 0, 99, 1, 2, 3) // a record cut short
	c.cb(&client.PullResult{Status: client.PullFound, NextBeginOffset: 10, MaxOffset: 10, Body: b}, nil)
	<-h.disp.seen
	c = h.nextCall(t)
	require.Equal(t, int64(3), c.h.QueueOffset, "the messages after the bad record are pulled again, not skipped")

	c.cb(&client.PullResult{Status: client.PullFound, NextBeginOffset: 10, MaxOffset: 10, Body: []byte{0, 0, 0, 1}}, nil)
	c = h.nextCall(t) // nothing decoded: the same offset after a second
	require.Equal(t, int64(3), c.h.QueueOffset)
	pq.SetDropped(true)
	c.cb(&client.PullResult{Status: client.PullNoNewMsg}, nil)
}

func TestPullRetryTopicNameIsReset(t *testing.T) {

	h := newHarness(t, nil)
	q := message.Queue{Topic: "%RETRY%g", BrokerName: "broker-a", QueueID: 0}
	pq := processqueue.New(time.Now())
	h.svc.Submit(NewRequest(q, pq, 0))
	c := h.nextCall(t)
	b := body(t, "%RETRY%g", 0, 1, "", message.Property{Name: message.PropertyRetryTopic, Value: "orders"})
	c.cb(&client.PullResult{Status: client.PullFound, NextBeginOffset: 1, MaxOffset: 1, Body: b}, nil)
	<-h.disp.seen
	h.disp.mu.Lock()
	require.Equal(t, "orders", h.disp.got[0].Topic)
	h.disp.mu.Unlock()
	c = h.nextCall(t)
	pq.SetDropped(true)
	c.cb(&client.PullResult{Status: client.PullNoNewMsg}, nil)
}

func TestPullPausedAndUnknownBroker(t *testing.T) {

	var paused sync.Mutex
	isPaused := true
	h := newHarness(t, func(c *Config) {
		c.Paused = func() bool { paused.Lock(); defer paused.Unlock(); return isPaused }
	})
	h.broker.mu.Lock()
	h.broker.addrs = map[int64]string{}
	h.broker.mu.Unlock()
	pq := processqueue.New(time.Now())
	h.svc.Submit(NewRequest(testQueue, pq, 0))
	h.noCall(t, 100*time.Millisecond)
	paused.Lock()
	isPaused = false
	paused.Unlock()
	require.Eventually(t, func() bool {
		h.broker.mu.Lock()
		defer h.broker.mu.Unlock()
		return h.broker.refreshes > 0
	}, 5*time.Second, 10*time.Millisecond, "an unknown broker asks for a route refresh")
	h.broker.mu.Lock()
	h.broker.addrs = map[int64]string{0: "127.0.0.1:10911"}
	h.broker.mu.Unlock()
	c := h.nextCall(t)
	pq.SetDropped(true)
	c.cb(&client.PullResult{Status: client.PullNoNewMsg}, nil)
}

func TestNewChecksConfig(t *testing.T) {
	_, err := New(Config{})
	require.Error(t, err)
}

// A pull carries the offset only when the broker has more messages (it is answered at
// once), and every answer releases its claim on the offset: one write of a queue's
// offset in flight at a time, whichever way it goes.
func TestPullCommitOnlyWithBacklog(t *testing.T) {
	h := newHarness(t, nil)
	pq := processqueue.New(time.Now())
	h.offsets.Update(testQueue, 10, true)
	h.svc.Submit(NewRequest(testQueue, pq, 10))

	c := h.nextCall(t)
	require.Zero(t, c.h.SysFlag&protocol.PullSysFlagCommitOffset, "the broker's max offset is not known yet")
	c.cb(&client.PullResult{Status: client.PullFound, NextBeginOffset: 12, MaxOffset: 30, Body: body(t, "t", 10, 12, "a")}, nil)
	<-h.disp.seen

	c = h.nextCall(t)
	require.NotZero(t, c.h.SysFlag&protocol.PullSysFlagCommitOffset, "12 < 30: answered at once")
	require.Equal(t, int64(10), c.h.CommitOffset)
	_, ok := h.offsets.BeginPullCommit(testQueue)
	require.False(t, ok, "the pull holds the offset")
	require.NoError(t, h.offsets.Flush(context.Background()), "nothing written beside it (the store has no broker)")

	c.cb(&client.PullResult{Status: client.PullFound, NextBeginOffset: 30, MaxOffset: 30, Body: body(t, "t", 12, 14, "a")}, nil)
	<-h.disp.seen
	c = h.nextCall(t)
	require.Zero(t, c.h.SysFlag&protocol.PullSysFlagCommitOffset, "30 = 30: the pull will be held; updates write the offset")
	commit, ok := h.offsets.BeginPullCommit(testQueue)
	require.True(t, ok, "the answered pull released the offset")
	h.offsets.EndPullCommit(commit, offset.CommitNotStored)

	// A refused pull releases its claim at once; a lost one keeps the queue busy.
	c.cb(&client.PullResult{Status: client.PullNoNewMsg, NextBeginOffset: 30, MaxOffset: 40}, nil)
	c = h.nextCall(t)
	require.NotZero(t, c.h.SysFlag&protocol.PullSysFlagCommitOffset)
	c.cb(nil, protocol.NewBrokerError("127.0.0.1:10911", nil, nil))
	commit, ok = h.offsets.BeginPullCommit(testQueue)
	require.True(t, ok, "refused: the broker did not read the offset")
	h.offsets.EndPullCommit(commit, offset.CommitNotStored)
	require.Equal(t, offset.CommitStored, commitOutcome(nil))
	require.Equal(t, offset.CommitUnknown, commitOutcome(&remoting.ConnError{Addr: "127.0.0.1:10911", Err: io.EOF}))
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, dead.Close())
	rc, err := remoting.NewClient()
	require.NoError(t, err)
	defer rc.Close()
	_, err = rc.Invoke(context.Background(), dead.Addr().String(), remoting.NewRequest(protocol.RequestPullMessage, nil, nil))
	require.Error(t, err)
	require.Equal(t, offset.CommitNotStored, commitOutcome(err), "never sent: the broker is down")
}
