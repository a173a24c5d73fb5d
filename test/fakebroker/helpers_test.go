package fakebroker

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// callTimeout bounds every call a test makes; nothing should come close to it.
const callTimeout = 10 * time.Second

// startCluster starts a cluster closed at the end of the test.
func startCluster(t testing.TB, opts ...Opt) *Cluster {
	t.Helper()
	c, err := NewCluster(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// client is a raw remoting client standing for a RocketMQ client: it records the
// requests the servers send it and answers them with answer (nil: SUCCESS, no body).
type client struct {
	t       testing.TB
	cl      *remoting.Client
	inbound chan *remoting.Command
	closed  chan string // addresses whose connection closed
	mu      sync.Mutex
	answer  func(req *remoting.Command) *remoting.Command
}

// setAnswer sets how the client answers the servers' requests.
func (c *client) setAnswer(f func(req *remoting.Command) *remoting.Command) {
	c.mu.Lock()
	c.answer = f
	c.mu.Unlock()
}

// newClient returns a client closed at the end of the test. The serialization is JSON
// unless given.
func newClient(t testing.TB, ser ...remoting.SerializeType) *client {
	t.Helper()
	c := &client{t: t, inbound: make(chan *remoting.Command, 256), closed: make(chan string, 64)}
	h := func(_ context.Context, _ string, req *remoting.Command) *remoting.Command {
		select {
		case c.inbound <- req:
		default:
		}
		c.mu.Lock()
		answer := c.answer
		c.mu.Unlock()
		if answer != nil {
			return answer(req)
		}
		resp := remoting.NewResponse(req, protocol.ResponseSuccess, "")
		return resp
	}
	opts := []remoting.ClientOption{remoting.WithConnHooks(remoting.ConnHooks{OnConnClosed: func(addr string, _ error) {
		select {
		case c.closed <- addr:
		default:
		}
	}})}
	for _, code := range []int32{protocol.RequestNotifyConsumerIDsChanged, protocol.RequestResetConsumerClientOffset,
		protocol.RequestGetConsumerStatusFromClient, protocol.RequestGetConsumerRunningInfo,
		protocol.RequestConsumeMessageDirectly} {
		opts = append(opts, remoting.WithHandler(code, h))
	}
	if len(ser) > 0 {
		opts = append(opts, remoting.WithSerialization(ser[0]))
	}
	cl, err := remoting.NewClient(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	c.cl = cl
	return c
}

// invoke sends req and returns the answer.
func (c *client) invoke(addr string, req *remoting.Command) *remoting.Command {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	resp, err := c.cl.Invoke(ctx, addr, req)
	require.NoError(c.t, err)
	return resp
}

// async sends req and returns a channel that gets its answer (or error).
func (c *client) async(addr string, req *remoting.Command) <-chan asyncResult {
	c.t.Helper()
	ch := make(chan asyncResult, 1)
	require.NoError(c.t, c.cl.InvokeAsync(addr, req, callTimeout, func(resp *remoting.Command, err error) {
		ch <- asyncResult{resp, err}
	}))
	return ch
}

type asyncResult struct {
	resp *remoting.Command
	err  error
}

// await waits for an async answer.
func await(t testing.TB, ch <-chan asyncResult) *remoting.Command {
	t.Helper()
	select {
	case r := <-ch:
		require.NoError(t, r.err)
		return r.resp
	case <-time.After(callTimeout):
		t.Fatal("no answer")
		return nil
	}
}

// notAnswered checks that nothing arrived on ch (for a short while: the test cannot
// prove a negative, only fail to see it).
func notAnswered(t testing.TB, ch <-chan asyncResult) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("answered: %+v %v", r.resp, r.err)
	case <-time.After(50 * time.Millisecond):
	}
}

// nextInbound waits for the next request a server sent to c.
func (c *client) nextInbound() *remoting.Command {
	c.t.Helper()
	select {
	case r := <-c.inbound:
		return r
	case <-time.After(callTimeout):
		c.t.Fatal("no request from the server")
		return nil
	}
}

// noInbound checks that no request from a server is waiting, after a short while.
func (c *client) noInbound() {
	c.t.Helper()
	select {
	case r := <-c.inbound:
		c.t.Fatalf("unexpected request from the server: code %d %v", r.Code, r.ExtFields)
	case <-time.After(50 * time.Millisecond):
	}
}

// heartbeat registers clientID as a push consumer of group subscribed to the topics
// with the given expressions ("topic", "expr", ...), at subVersion.
func (c *client) heartbeat(addr, clientID, group string, subVersion int64, topicExprs ...string) *remoting.Command {
	c.t.Helper()
	cd := protocol.ConsumerData{GroupName: group, ConsumeType: protocol.ConsumePassively,
		MessageModel: protocol.Clustering, ConsumeFromWhere: protocol.ConsumeFromFirstOffset}
	for i := 0; i+1 < len(topicExprs); i += 2 {
		sd, err := protocol.BuildSubscription(topicExprs[i], topicExprs[i+1])
		require.NoError(c.t, err)
		sd.SubVersion = subVersion
		cd.SubscriptionDataSet = append(cd.SubscriptionDataSet, sd)
	}
	hb := protocol.HeartbeatData{ClientID: clientID, ConsumerDataSet: []protocol.ConsumerData{cd}}
	resp := c.invoke(addr, remoting.NewRequest(protocol.RequestHeartBeat, nil, hb.Encode(protocol.StyleFastjson)))
	require.Equal(c.t, protocol.ResponseSuccess, resp.Code, resp.Remark)
	return resp
}

// pullRequest builds a PULL_MESSAGE request.
func pullRequest(group, topic string, queue int32, offset int64, maxNums int32, sysFlag int32, suspend time.Duration, sub string) *remoting.Command {
	h := protocol.PullMessageRequest{ConsumerGroup: group, Topic: topic, QueueID: queue, QueueOffset: offset,
		MaxMsgNums: maxNums, SysFlag: sysFlag, SuspendTimeoutMillis: suspend.Milliseconds(), Subscription: sub,
		ExpressionType: protocol.ExpressionTypeTag, BrokerName: "broker-a"}
	return remoting.NewRequest(protocol.RequestPullMessage, h.Encode(), nil)
}

// sendRequest builds a SEND_MESSAGE request (long names) to a queue, with properties
// given as name, value, ...
func sendRequest(topic string, queue int32, body string, props ...string) *remoting.Command {
	var pairs []message.Property
	for i := 0; i+1 < len(props); i += 2 {
		pairs = append(pairs, message.Property{Name: props[i], Value: props[i+1]})
	}
	p := message.PropertiesOf(pairs...)
	h := protocol.SendMessageRequest{ProducerGroup: "pg", Topic: topic, DefaultTopic: autoCreateTopic,
		DefaultTopicQueueNums: 4, QueueID: queue, BornTimestamp: time.Now().UnixMilli(), Properties: p.String(),
		MaxReconsumeTimes: protocol.Some(int32(16))}
	return remoting.NewRequest(protocol.RequestSendMessage, h.Encode(), []byte(body))
}

// send sends a message and requires SUCCESS.
func (c *client) send(addr, topic string, queue int32, body string, props ...string) protocol.SendMessageResponse {
	c.t.Helper()
	resp := c.invoke(addr, sendRequest(topic, queue, body, props...))
	require.Equal(c.t, protocol.ResponseSuccess, resp.Code, resp.Remark)
	var h protocol.SendMessageResponse
	require.NoError(c.t, h.Decode(resp.ExtFields))
	return h
}

// pullResult decodes a pull answer's header and messages.
func pullResult(t testing.TB, resp *remoting.Command) (protocol.PullMessageResponse, []*message.Ext) {
	t.Helper()
	var h protocol.PullMessageResponse
	require.NoError(t, h.Decode(resp.ExtFields), "code %d remark %q", resp.Code, resp.Remark)
	msgs, err := message.DecodeAll(resp.Body)
	require.NoError(t, err)
	return h, msgs
}

// bodies returns the bodies of msgs as strings.
func bodies(msgs []*message.Ext) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Body)
	}
	return out
}

// golden reads and decodes a captured frame from testdata/<scenario>/<nnnn>-*.bin.
func golden(t testing.TB, scenario, n string) *remoting.Command {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join("testdata", scenario, n+"-*.bin"))
	require.NoError(t, err)
	require.Len(t, matches, 1, "%s/%s", scenario, n)
	data, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	cmd, err := remoting.DecodeFrame(data)
	require.NoError(t, err)
	return cmd
}

// keys returns the ext-field keys of cmd, or nil when it has no ext fields at all.
func keys(cmd *remoting.Command) []string {
	if cmd.ExtFields == nil {
		return nil
	}
	out := []string{}
	for _, f := range cmd.ExtFields {
		if f.Key == "ReqT" || f.Key == "AccessKey" || f.Key == "Signature" {
			continue
		}
		out = append(out, f.Key)
	}
	return out
}

func itoa32(n int32) string { return strconv.Itoa(int(n)) }
