package client

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

func sql92Subscription(t *testing.T, topic, expr string) protocol.SubscriptionData {
	t.Helper()
	sd, err := protocol.BuildSubscriptionOfType(topic, protocol.ExpressionTypeSQL92, expr)
	require.NoError(t, err)
	sd.SubVersion = 1
	return sd
}

func TestCheckClientConfigAsksEveryMaster(t *testing.T) {
	for _, on := range []bool{false, true} {
		c := newTestCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic("T", 2), fakebroker.WithPropertyFilter(on))
		inst := newTestInstance(t, c.NameServerAddr())
		checks, err := inst.CheckClientConfig(t.Context(), "G", sql92Subscription(t, "T", "a > 5 AND b = 'x'"))
		require.NoError(t, err)
		require.Len(t, checks, 2)
		for k, b := range c.Brokers() {
			require.Equal(t, b.Name(), checks[k].BrokerName)
			require.Equal(t, b.Addr(), checks[k].Addr)
			if on {
				require.NoError(t, checks[k].Err)
				continue
			}
			var be *protocol.BrokerError
			require.ErrorAs(t, checks[k].Err, &be)
			require.Equal(t, protocol.RequestCheckClientConfig, be.RequestCode)
			require.Equal(t, int32(protocol.ResponseSystemError), be.Code)
			require.Equal(t, "The broker does not support consumer to filter message by SQL92", be.Remark)
			require.Equal(t, b.Addr(), be.Addr)
		}
	}
}

func TestCheckClientConfigRefusalsAndFailures(t *testing.T) {
	c := newTestCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic("T", 2), fakebroker.WithPropertyFilter(true))
	inst := newTestInstance(t, c.NameServerAddr())
	checks, err := inst.CheckClientConfig(t.Context(), "G", sql92Subscription(t, "T", "a > AND"))
	require.NoError(t, err)
	for _, ch := range checks {
		require.ErrorIs(t, ch.Err, protocol.ResponseCodeError(protocol.ResponseSubscriptionParseFailed))
		require.ErrorContains(t, ch.Err, `Encountered " "AND" "AND "" at line 1, column 5.`)
	}
	// A broker that cannot be reached is reported as such, not as a refusal.
	c.Broker("broker-b").Stop()
	checks, err = inst.CheckClientConfig(t.Context(), "G", sql92Subscription(t, "T", "a > 5"))
	require.NoError(t, err)
	require.NoError(t, checks[0].Err)
	var be *protocol.BrokerError
	require.Error(t, checks[1].Err)
	require.False(t, errors.As(checks[1].Err, &be), "%v", checks[1].Err)

	_, err = inst.CheckClientConfig(t.Context(), "G", sql92Subscription(t, "Unknown", "a > 5"))
	require.ErrorIs(t, err, protocol.ResponseCodeError(protocol.ResponseTopicNotExist))
}
