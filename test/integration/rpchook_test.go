package integration

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// sentRequest is a request as the consumer sent it.
type sentRequest struct {
	code   int32
	fields remoting.Fields
	body   []byte
	answer int32 // the response code; -1 until answered (oneway: never)
}

// requestLog is an RPC hook that records every request a consumer sends and the code
// of the answer, and adds a field of its own to each, as a cloud's signing hook would.
type requestLog struct {
	mu   sync.Mutex
	sent []*sentRequest
	byOp map[*remoting.Command]*sentRequest
}

func newRequestLog() *requestLog { return &requestLog{byOp: map[*remoting.Command]*sentRequest{}} }

func (l *requestLog) BeforeRequest(_ string, req *remoting.Command) {
	req.ExtFields.Set("CloudToken", "t-1")
	r := &sentRequest{code: req.Code, fields: slices.Clone(req.ExtFields), body: slices.Clone(req.Body), answer: -1}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent = append(l.sent, r)
	l.byOp[req] = r
}

func (l *requestLog) AfterResponse(_ string, req, resp *remoting.Command) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.byOp[req]; r != nil {
		r.answer = resp.Code
		delete(l.byOp, req)
	}
}

// of returns the requests sent with code.
func (l *requestLog) of(code int32) []*sentRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*sentRequest
	for _, r := range l.sent {
		if r.code == code {
			out = append(out, r)
		}
	}
	return out
}

// answered reports whether some request with code was answered with answer.
func (l *requestLog) answered(code, answer int32) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.sent {
		if r.code == code && r.answer == answer {
			return true
		}
	}
	return false
}

// A WithRPCHook hook sees every request the consumer sends, may add fields to it, and
// sees the answers.
func TestRPCHookSeesEveryRequestAndAnswer(t *testing.T) {
	c := newCluster(t)
	topic := "HookTopic"
	require.NoError(t, c.CreateTopic(topic, 2))
	log := newRequestLog()
	want := produce(t, c, topic, "hook", 20, "")
	got := newTally()
	pc := startConsumer(t, "hook-group", topic, consumer.All(), fastOptions(c, consumer.WithRPCHook(log)),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			got.add(msgs)
			return consumer.ConsumeSuccess
		})
	waitFor(t, 10*time.Second, "every message", func() bool { return got.distinct() == len(want) })
	shutdown(t, pc)

	for _, code := range []int32{protocol.RequestGetRouteInfoByTopic, protocol.RequestHeartBeat,
		protocol.RequestGetConsumerListByGroup, protocol.RequestQueryConsumerOffset, protocol.RequestPullMessage,
		protocol.RequestUpdateConsumerOffset, protocol.RequestUnregisterClient} {
		sent := log.of(code)
		require.NotEmpty(t, sent, "request %s", protocol.RequestName(code))
		for _, r := range sent {
			require.Equal(t, "t-1", r.fields.Value("CloudToken"))
		}
		require.True(t, log.answered(code, protocol.ResponseSuccess), "a SUCCESS answer to %s", protocol.RequestName(code))
	}
}
