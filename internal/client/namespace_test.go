package client

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
)

// The cases of Java 4.9.8's NamespaceUtilTest, and the names of the j_namespace
// capture (a Java consumer with namespace GoldenNs).
func TestNamespaceWrapAndUnwrap(t *testing.T) {
	ns := Namespace("MQ_INST_XXX")
	for _, c := range []struct{ user, wire string }{
		{"TOPIC_XXX", "MQ_INST_XXX%TOPIC_XXX"},
		{"GID_XXX", "MQ_INST_XXX%GID_XXX"},
		{"%RETRY%GID_XXX", "%RETRY%MQ_INST_XXX%GID_XXX"},
		{"%DLQ%GID_XXX", "%DLQ%MQ_INST_XXX%GID_XXX"},
	} {
		require.Equal(t, c.wire, ns.Wrap(c.user))
		require.Equal(t, c.wire, ns.Wrap(c.wire), "already in the namespace")
		require.Equal(t, c.user, ns.Unwrap(c.wire))
		require.Equal(t, c.user, ns.Unwrap(c.user), "not in the namespace")
	}
	require.Equal(t, "%RETRY%MQ_INST_XXX%GID_XXX", Namespace("MQ_INST_XXX1").Unwrap("%RETRY%MQ_INST_XXX%GID_XXX"), "another namespace's name")
	for _, sys := range []string{"rmq_sys_topic", "TBW102", "SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRACE_TOPIC", "OFFSET_MOVED_EVENT", "CID_RMQ_SYS_TRANS"} {
		require.Equal(t, sys, ns.Wrap(sys), "system resources stay as they are")
	}
	require.Equal(t, "CLIENT_INNER_PRODUCER", Namespace("").Wrap("CLIENT_INNER_PRODUCER"))
	require.Equal(t, "t", Namespace("").Wrap("t"))
	require.Equal(t, "", ns.Wrap(""))

	golden := Namespace("GoldenNs")
	require.Equal(t, "GoldenNs%GoldenJTopic", golden.Wrap("GoldenJTopic"))
	require.Equal(t, "%RETRY%GoldenNs%GoldenJGroup", RetryTopic(golden.Wrap("GoldenJGroup")))
	require.Equal(t, "%RETRY%GoldenNs%GoldenJGroup", golden.Wrap(RetryTopic("GoldenJGroup")))
}

func TestNamesResetMessages(t *testing.T) {
	n := NewNames("GoldenNs", "GoldenJGroup")
	require.Equal(t, "GoldenNs%GoldenJGroup", n.Group)
	require.Equal(t, "GoldenJGroup", n.UserGroup)
	require.Equal(t, n, NewNames("GoldenNs", "GoldenNs%GoldenJGroup"), "either name of the group")
	require.Equal(t, "%RETRY%GoldenNs%GoldenJGroup", n.RetryTopic)
	require.Equal(t, "%RETRY%GoldenJGroup", n.UserTopic(n.RetryTopic))

	// A redelivered retry as the capture shows it: RETRY_TOPIC carries the wrapped topic.
	retried := &message.Ext{Message: message.Message{Topic: "%RETRY%GoldenNs%GoldenJGroup"}}
	retried.Properties.Set(message.PropertyRetryTopic, "GoldenNs%GoldenJTopic")
	n.ResetMessage(retried)
	require.Equal(t, "GoldenJTopic", retried.Topic)

	plain := &message.Ext{Message: message.Message{Topic: "GoldenNs%GoldenJTopic"}}
	n.ResetMessage(plain)
	require.Equal(t, "GoldenJTopic", plain.Topic)

	none := NewNames("", "g")
	m := &message.Ext{Message: message.Message{Topic: "%RETRY%g"}}
	m.Properties.Set(message.PropertyRetryTopic, "t")
	none.ResetMessage(m)
	require.Equal(t, "t", m.Topic)
	require.Equal(t, message.Queue{Topic: "t", BrokerName: "b"}, n.UserQueue(message.Queue{Topic: "GoldenNs%t", BrokerName: "b"}))

	// Pulled from a POP retry topic (a group back from POP to pull): the topic it stands
	// for, as Java's tryResetPopRetryTopic gives it, V1 and V2 names alike.
	for _, topic := range []string{"%RETRY%GoldenNs%GoldenJGroup_GoldenNs%GoldenJTopic", "%RETRY%GoldenNs%GoldenJGroup+GoldenNs%GoldenJTopic"} {
		popRetried := &message.Ext{Message: message.Message{Topic: topic}}
		n.ResetMessage(popRetried)
		require.Equal(t, "GoldenJTopic", popRetried.Topic)
	}
	other := &message.Ext{Message: message.Message{Topic: "%RETRY%GoldenNs%GoldenJGroupX"}}
	n.ResetMessage(other)
	require.Equal(t, "%RETRY%GoldenJGroupX", other.Topic, "another group's retry topic stays")
}

// Restoring a pulled message's topic allocates nothing.
func TestNamesResetMessageDoesNotAllocate(t *testing.T) {
	n := NewNames("GoldenNs", "GoldenJGroup")
	retried := &message.Ext{Message: message.Message{Topic: n.RetryTopic}}
	retried.Properties.Set(message.PropertyRetryTopic, "GoldenNs%GoldenJTopic")
	noProp := &message.Ext{Message: message.Message{Topic: n.RetryTopic}}
	plain := &message.Ext{Message: message.Message{Topic: "GoldenNs%GoldenJTopic"}}
	allocs := testing.AllocsPerRun(100, func() {
		retried.Topic, noProp.Topic, plain.Topic = n.RetryTopic, n.RetryTopic, "GoldenNs%GoldenJTopic"
		n.ResetMessage(retried)
		n.ResetMessage(noProp)
		n.ResetMessage(plain)
	})
	require.Zero(t, allocs)
	require.Equal(t, "%RETRY%GoldenJGroup", noProp.Topic)
}
