package msgtrace

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type sent struct {
	group   string
	q       message.Queue
	msg     *message.Message
	sysFlag int32
}

// fakeSender records sends; block, when set, holds every send until it is closed.
type fakeSender struct {
	mu      sync.Mutex
	sends   []sent
	block   chan struct{}
	fail    error
	noRoute bool
	lookups int
}

func (f *fakeSender) WritableQueues(topic string) ([]message.Queue, bool) {
	if f.noRoute {
		return nil, false
	}
	return []message.Queue{{Topic: topic, BrokerName: "b", QueueID: 0}}, true
}

func (f *fakeSender) UpdateTopicRoute(context.Context, string) (bool, error) {
	f.mu.Lock()
	f.lookups++
	f.mu.Unlock()
	return false, errors.New("TOPIC_NOT_EXIST")
}

func (f *fakeSender) SendEncoded(ctx context.Context, group string, q message.Queue, msg *message.Message, sysFlag int32) (*protocol.SendMessageResponse, error) {
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	f.sends = append(f.sends, sent{group, q, msg, sysFlag})
	return &protocol.SendMessageResponse{}, nil
}

func (f *fakeSender) all() []sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sent(nil), f.sends...)
}

func entry(topic string, i int, size int) Entry {
	r := SubBefore{Timestamp: 1, Group: "g", RequestID: "R", MsgID: fmt.Sprintf("ID%d", i), Keys: strings.Repeat("k", size)}
	return Entry{Topic: topic, MsgID: r.MsgID, Keys: r.Keys, Data: r.Append(nil)}
}

func newDispatcher(t *testing.T, s Sender, maxPending int) *Dispatcher {
	t.Helper()
	d, err := New(Config{Group: "g", Sender: s, IDs: NewIDGen("10.1.2.3", 42, 7), MaxPending: maxPending})
	require.NoError(t, err)
	return d
}

func TestDispatcherBatchesByTopicAsJava(t *testing.T) {
	s := &fakeSender{}
	d := newDispatcher(t, s, 0)
	d.Start()
	for i := range 3 {
		require.True(t, d.Append(entry("a", i, 2)))
	}
	require.True(t, d.Append(entry("b", 9, 0)))
	d.Close(context.Background())

	got := s.all()
	require.Len(t, got, 2, "one message per traced topic")
	first := got[0]
	require.Equal(t, "_INNER_TRACE_PRODUCER-g-CONSUME-1", first.group)
	require.Equal(t, DefaultTopic, first.msg.Topic)
	require.Equal(t, DefaultTopic, first.q.Topic)
	require.Zero(t, first.sysFlag)
	require.Equal(t, "ID0 kk ID1 ID2", first.msg.Properties.Value(message.PropertyKeys), "msgIds and keys, each once")
	require.Equal(t, "true", first.msg.Properties.Value(message.PropertyWaitStoreMsgOK))
	id := first.msg.Properties.Value(message.PropertyUniqKey)
	require.Len(t, id, 32)
	require.True(t, strings.HasPrefix(id, "0A010203002A00000007"), "ip, pid and salt, as Java's createUniqID lays them out: %s", id)
	require.Equal(t, 3, strings.Count(string(first.msg.Body), "\x02"))
	require.Equal(t, "ID9", got[1].msg.Properties.Value(message.PropertyKeys), "no keys: only the msgId")
	require.Equal(t, int64(4), d.Sent())
	require.Zero(t, d.Dropped()+d.Failed())
}

func TestDispatcherCompressesLargeBodiesAsJava(t *testing.T) {
	s := &fakeSender{}
	d := newDispatcher(t, s, 0)
	d.Start()
	for i := range 20 {
		d.Append(entry("a", i, 300))
	}
	d.Close(context.Background())
	got := s.all()
	require.NotEmpty(t, got)
	var records int
	for _, g := range got {
		require.Equal(t, message.SysFlagCompressed, g.sysFlag)
		zr, err := zlib.NewReader(bytes.NewReader(g.msg.Body)) // Java's producers deflate with zlib framing
		require.NoError(t, err)
		body, err := io.ReadAll(zr)
		require.NoError(t, err)
		records += strings.Count(string(body), "\x02")
	}
	require.Equal(t, 20, records)
}

func TestDispatcherNeverBlocksAndBoundsMemory(t *testing.T) {
	s := &fakeSender{block: make(chan struct{})}
	d := newDispatcher(t, s, 10)
	d.Start()
	begin := time.Now()
	queued := 0
	for i := range 1000 {
		if d.Append(entry("a", i, 0)) {
			queued++
		}
	}
	require.Less(t, time.Since(begin), time.Second, "appending never waits for the send")
	require.LessOrEqual(t, queued, 10+batchRecords, "at most MaxPending wait, besides the batch being sent")
	require.Equal(t, int64(1000-queued), d.Dropped())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	d.Close(ctx) // the send in flight is cancelled; the rest are counted as failed
	require.Equal(t, int64(queued), d.Failed()+d.Sent())
	close(s.block)
}

func TestDispatcherWithoutRouteDropsAndRetriesLater(t *testing.T) {
	s := &fakeSender{noRoute: true}
	d := newDispatcher(t, s, 0)
	d.Start()
	for i := range 5 {
		d.Append(entry("a", i, 0))
		time.Sleep(2 * linger) // separate batches
	}
	d.Close(context.Background())
	require.Equal(t, int64(5), d.Failed())
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Equal(t, 1, s.lookups, "one name-server lookup per routeRetry, not one per batch")
}
