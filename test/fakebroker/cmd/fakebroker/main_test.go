package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rmqpush/rmqpush/test/fakebroker"
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
