package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
	"github.com/rmqpush/rmqpush/test/fakebroker"
	"github.com/rmqpush/rmqpush/test/fakebroker/control"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestOptions(t *testing.T) {
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{"defaults, free port", []string{"-namesrv", "127.0.0.1:0"}, ""},
		{"two brokers and topics", []string{"-namesrv", "127.0.0.1:0", "-brokers", "2", "-topic", "A:8", "-topic", "B:2:broker-b", "-delay-scale", "0.01"}, ""},
		{"bad namesrv", []string{"-namesrv", "nowhere"}, "-namesrv"},
		{"bad topic", []string{"-topic", "A"}, "want name:queues"},
		{"bad port list", []string{"-broker-ports", "1,x"}, "-broker-ports"},
		{"port count", []string{"-namesrv", "127.0.0.1:0", "-brokers", "2", "-broker-ports", "0"}, "WithBrokerPorts"},
		{"bad host", []string{"-namesrv", "localhost:0"}, "WithHost"},
		{"stray argument", []string{"extra"}, "unexpected arguments"},
		{"control on loopback", []string{"-namesrv", "127.0.0.1:0", "-control", "127.0.0.1:0"}, ""},
		{"property filter", []string{"-namesrv", "127.0.0.1:0", "-property-filter"}, ""},
		{"realistic broker", []string{"-namesrv", "127.0.0.1:0", "-pull-service-time", "300us", "-out-of-order-offsets", "2ms"}, ""},
		{"negative service time", []string{"-pull-service-time", "-1ms"}, "must not be negative"},
		{"control not on loopback", []string{"-control", "0.0.0.0:0"}, "loopback"},
		{"control without port", []string{"-control", "127.0.0.1"}, "-control"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, _, err := options(tt.args, io.Discard)
			if err == nil {
				var c *fakebroker.Cluster
				c, err = fakebroker.NewCluster(opts...)
				if err == nil {
					require.NoError(t, c.Close())
				}
			}
			if tt.err == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.err)
			}
		})
	}
}

// The command prints its addresses, "ready", and serves the control endpoint until its
// context ends.
// -property-filter turns enablePropertyFilter on: CHECK_CLIENT_CONFIG of an SQL92
// subscription succeeds instead of being refused.
func TestPropertyFilterFlag(t *testing.T) {
	for _, on := range []bool{false, true} {
		args := []string{"-namesrv", "127.0.0.1:0"}
		want := protocol.ResponseSystemError
		if on {
			args = append(args, "-property-filter")
			want = protocol.ResponseSuccess
		}
		opts, _, err := options(args, io.Discard)
		require.NoError(t, err)
		c, err := fakebroker.NewCluster(opts...)
		require.NoError(t, err)
		rc, err := remoting.NewClient()
		require.NoError(t, err)
		body := protocol.CheckClientConfigBody{ClientID: "c@1", Group: "G", SubscriptionData: protocol.SubscriptionData{
			Topic: "T", SubString: "a > 1", ExpressionType: protocol.ExpressionTypeSQL92}}
		resp, err := rc.Invoke(t.Context(), c.Brokers()[0].Addr(),
			remoting.NewRequest(protocol.RequestCheckClientConfig, nil, body.Encode(protocol.StyleStandard)))
		require.NoError(t, err)
		require.Equal(t, want, resp.Code, resp.Remark)
		require.NoError(t, rc.Close())
		require.NoError(t, c.Close())
	}
}

func TestServeWithControl(t *testing.T) {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, []string{"-namesrv", "127.0.0.1:0", "-control", "127.0.0.1:0", "-topic", "t:2"}, pw, io.Discard)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	var endpoint string
	for lines.Scan() {
		line := lines.Text()
		if addr, ok := strings.CutPrefix(line, "control "); ok {
			endpoint = addr
		}
		if line == "ready" {
			break
		}
	}
	require.NotEmpty(t, endpoint)
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(endpoint + "/brokers")
	require.NoError(t, err)
	var brokers []control.BrokerInfo
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&brokers))
	resp.Body.Close()
	require.Len(t, brokers, 1)
	require.True(t, brokers[0].Running)
	client.CloseIdleConnections()
	cancel()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	require.NoError(t, <-done)
}
