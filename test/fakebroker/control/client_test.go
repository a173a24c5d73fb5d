package control

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The client drives every route of the handler and reports the handler's errors.
func TestClient(t *testing.T) {
	c, err := fakebroker.NewCluster(fakebroker.WithBrokers(2), fakebroker.WithTopic("t", 1))
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	srv := httptest.NewServer(NewHandler(c))
	defer srv.Close()
	cl := NewClient(srv.URL)
	defer cl.Close()
	ctx := context.Background()

	brokers, err := cl.Brokers(ctx)
	require.NoError(t, err)
	require.Len(t, brokers, 2)

	bodies := make([]string, produceChunk+3) // two requests
	for i := range bodies {
		bodies[i] = "m"
	}
	require.NoError(t, cl.Produce(ctx, "t", bodies))
	require.Len(t, c.Messages("t"), len(bodies))

	c.Broker("broker-b").SetCommittedOffset("g", "t", 0, 7)
	offs, err := cl.Offsets(ctx, "g", "t")
	require.NoError(t, err)
	require.Equal(t, []QueueOffsets{
		{Broker: "broker-a", QueueID: 0, Max: int64(len(bodies)+1) / 2, Committed: -1},
		{Broker: "broker-b", QueueID: 0, Max: int64(len(bodies)) / 2, Committed: 7},
	}, offs)

	msgs, err := cl.Messages(ctx, "t", 3)
	require.NoError(t, err)
	require.Len(t, msgs, 3)

	clients, err := cl.Clients(ctx, "g")
	require.NoError(t, err)
	require.Equal(t, map[string][]string{"broker-a": {}, "broker-b": {}}, clients)

	require.NoError(t, cl.Broker(ctx, "broker-a", "stop"))
	require.False(t, c.Broker("broker-a").Running())
	require.NoError(t, cl.Broker(ctx, "broker-a", "start"))
	require.NoError(t, cl.Inject(ctx, "broker-b", FaultSpec{Code: protocol.RequestPullMessage, Fail: protocol.ResponseSystemBusy, For: "1m"}))

	require.NoError(t, cl.NameServer(ctx, "stop"))
	require.False(t, c.NameServer().Running())
	require.NoError(t, cl.NameServer(ctx, "start"))
	require.True(t, c.NameServer().Running())
	require.ErrorContains(t, cl.NameServer(ctx, "reboot"), `unknown action "reboot"`)
	require.NoError(t, cl.SetConsumeMode(ctx, "g", "t", "POP", 0))
	require.ErrorContains(t, cl.SetConsumeMode(ctx, "g", "nope", "POP", 0), "topic[nope] not exist")

	err = cl.Broker(ctx, "broker-z", "stop")
	require.ErrorContains(t, err, `no broker named "broker-z"`)
	require.ErrorContains(t, cl.Inject(ctx, "broker-a", FaultSpec{Code: 11, Delay: "soon"}), `fault delay "soon"`)
	_, err = cl.Messages(ctx, "", 1)
	require.ErrorContains(t, err, "400 Bad Request: messages: topic is required")
}

func TestCheckAddr(t *testing.T) {
	require.NoError(t, CheckAddr("127.0.0.1:0"))
	require.NoError(t, CheckAddr("[::1]:8080"))
	require.ErrorContains(t, CheckAddr("0.0.0.0:0"), "loopback")
	require.ErrorContains(t, CheckAddr("localhost:1"), "loopback")
	require.Error(t, CheckAddr("127.0.0.1"))
}
