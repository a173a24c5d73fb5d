package fakebroker

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNewClusterOptionErrors(t *testing.T) {
	tests := []struct {
		name string
		opt  Opt
		want string
	}{
		{"no brokers", WithBrokers(0), "WithBrokers(0)"},
		{"bad broker name", WithBrokerNames("a b"), "WithBrokerNames"},
		{"duplicate names", WithBrokerNames("x", "x"), "appears twice"},
		{"port count", WithBrokerPorts(1, 2, 3), "WithBrokerPorts"},
		{"bad port", WithNameServerPort(70000), "WithNameServerPort(70000)"},
		{"bad host", WithHost("localhost"), "WithHost"},
		{"bad topic", WithTopic("a b", 4), `WithTopic("a b", 4)`},
		{"no queues", WithTopic("t", 0), `WithTopic("t", 0)`},
		{"unknown broker", WithTopic("t", 1, "broker-z"), "unknown broker"},
		{"no levels", WithDelayLevels(), "WithDelayLevels"},
		{"bad level", WithDelayLevels(time.Second, 0), "level 2"},
		{"bad scale", WithDelayScale(0), "WithDelayScale(0)"},
		{"bad expiry", WithClientExpiry(0), "WithClientExpiry"},
		{"bad lock expiry", WithLockExpiry(-time.Second), "WithLockExpiry"},
		{"bad hold check", WithHoldCheckInterval(0), "WithHoldCheckInterval"},
		{"bad retry max", WithRetryMaxTimes(-1), "WithRetryMaxTimes(-1)"},
		{"bad message size", WithMaxMessageSize(10), "WithMaxMessageSize(10)"},
		{"empty cluster", WithClusterName(""), "WithClusterName"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewCluster(tt.opt)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestClusterAddressesAndNames(t *testing.T) {
	c := startCluster(t, WithBrokers(3), WithTopic("T", 2, "broker-b"))
	require.Len(t, c.Brokers(), 3)
	for i, b := range c.Brokers() {
		require.Equal(t, brokerName(i), b.Name())
		require.True(t, b.Running())
		_, port, err := net.SplitHostPort(b.Addr())
		require.NoError(t, err)
		require.NotEqual(t, "0", port)
	}
	require.Nil(t, c.Broker("broker-z"))
	_, ok := c.Broker("broker-a").Topic("T")
	require.False(t, ok)
	ti, ok := c.Broker("broker-b").Topic("T")
	require.True(t, ok)
	require.Equal(t, TopicInfo{Name: "T", ReadQueues: 2, WriteQueues: 2, Perm: permRW}, ti)
	require.Equal(t, "broker-aa", brokerName(26))
}

func TestFixedPorts(t *testing.T) {
	ports := freePorts(t, 3)
	c := startCluster(t, WithBrokers(2), WithNameServerPort(ports[0]), WithBrokerPorts(ports[1], ports[2]))
	require.Equal(t, "127.0.0.1:"+strconv.Itoa(ports[0]), c.NameServerAddr())
	require.Equal(t, "127.0.0.1:"+strconv.Itoa(ports[2]), c.Broker("broker-b").Addr())
}

func TestCloseTwice(t *testing.T) {
	c, err := NewCluster()
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	require.False(t, c.Broker("broker-a").Running())
}

// freePorts finds n free ports (released before use: another process could take one,
// which would fail the test, not hang it).
func freePorts(t *testing.T, n int) []int {
	var out []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		lns = append(lns, ln)
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		require.NoError(t, ln.Close())
	}
	return out
}
