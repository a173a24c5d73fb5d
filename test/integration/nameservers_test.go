package integration

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// A consumer given only the domain of an HTTP address service (Java's TopAddressing)
// fetches the name-server list from it at Start and consumes.
func TestNameServersFromTheAddressService(t *testing.T) {
	noNameServerEnv(t)
	c := newCluster(t, fakebroker.WithTopic("t", 2))
	asked := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- r.URL.Path
		_, _ = io.WriteString(w, c.NameServerAddr()+"\n")
	}))
	defer srv.Close()
	want := produce(t, c, "t", "m", 10, "")
	got := newTally()
	opts := fastOptions(c)[1:] // everything but WithNameServers
	pc := startConsumer(t, "g", "t", consumer.All(), append(opts, consumer.WithNameServerDomain(strings.TrimPrefix(srv.URL, "http://"))),
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			got.add(msgs)
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 10*time.Second, "every message", func() bool { return got.distinct() == len(want) })
	require.Equal(t, "/rocketmq/nsaddr", <-asked)
}

// noNameServerEnv unsets, for the test, the environment variables that would name
// name servers before an address service.
func noNameServerEnv(t *testing.T) {
	t.Setenv("rocketmq.namesrv.addr", "")
	t.Setenv("NAMESRV_ADDR", "")
}

// Start fails, naming the service, when the address service cannot give a list.
func TestAddressServiceDownFailsStart(t *testing.T) {
	noNameServerEnv(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	pc, err := consumer.NewPushConsumer("g", consumer.WithNameServerDomain(strings.TrimPrefix(srv.URL, "http://")))
	require.NoError(t, err)
	require.NoError(t, pc.Subscribe("t", consumer.All()))
	require.NoError(t, pc.RegisterListener(consumer.ConcurrentlyFunc(func(context.Context, []*message.Ext, *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
		return consumer.ConsumeSuccess
	})))
	err = pc.Start(context.Background())
	require.ErrorContains(t, err, srv.URL+"/rocketmq/nsaddr")
	require.ErrorContains(t, err, "503")
}

// Without WithNameServers, NAMESRV_ADDR names them, as for Java.
func TestNameServersFromTheEnvironment(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1))
	noNameServerEnv(t)
	t.Setenv("NAMESRV_ADDR", c.NameServerAddr())
	want := produce(t, c, "t", "m", 5, "")
	got := newTally()
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c)[1:],
		func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			got.add(msgs)
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 10*time.Second, "every message", func() bool { return got.distinct() == len(want) })
}
