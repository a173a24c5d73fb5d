package consumer

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWithNamespace(t *testing.T) {
	c, err := NewPushConsumer("GoldenJGroup", WithNameServers("127.0.0.1:9876"), WithNamespace("GoldenNs"))
	require.NoError(t, err)
	require.Equal(t, "GoldenJGroup", c.Group(), "the group as given")
	require.Equal(t, "GoldenNs%GoldenJGroup", c.group, "on the wire")
	require.NoError(t, c.Subscribe("GoldenJTopic", All()))
	_, ok := c.subscription("GoldenNs%GoldenJTopic")
	require.True(t, ok, "subscribed on the wire in the namespace")
	require.NoError(t, c.Subscribe("GoldenNs%Other", All()))
	_, ok = c.subscription("GoldenNs%Other")
	require.True(t, ok, "a topic already in the namespace is left alone")

	for _, bad := range []string{"a%b", "a b", "ü"} {
		_, err := NewPushConsumer("g", WithNameServers("127.0.0.1:9876"), WithNamespace(bad))
		require.ErrorContains(t, err, "WithNamespace", bad)
	}
	long := make([]byte, 250)
	for i := range long {
		long[i] = 'g'
	}
	_, err = NewPushConsumer(string(long), WithNameServers("127.0.0.1:9876"), WithNamespace("ns1234"))
	require.ErrorContains(t, err, "WithNamespace", "the wrapped group is too long")
	c, err = NewPushConsumer("g", WithNameServers("127.0.0.1:9876"), WithNamespace(string(long[:125])))
	require.NoError(t, err)
	require.ErrorContains(t, c.Subscribe("topic", All()), "longer than 127")
}

// Java derives the namespace from an instance endpoint given as the name-server address
// (NameServerAddressUtils) and drops an http:// prefix from it (getNamesrvAddr).
func TestNamespaceFromInstanceEndpoint(t *testing.T) {
	for addr, want := range map[string]string{
		"MQ_INST_123_abc.mq.example.com:80":        "MQ_INST_123_abc",
		"http://MQ_INST_123_abc.mq.example.com:80": "MQ_INST_123_abc",
		"MQ_INST_a__.x:1":                          "MQ_INST_a__",
		"MQ_INST_abc.mq.example.com:80":            "", // no underscore inside the id
		"MQ_INST__abc.x:1":                         "", // nothing before it
		"127.0.0.1:9876":                           "",
		"x-y://MQ_INST_1_2.x:1":                    "", // the scheme is not a word
	} {
		require.Equal(t, want, instanceNamespace(addr), addr)
	}
	c, err := NewPushConsumer("g", WithNameServers("http://MQ_INST_123_abc.mq.example.com:80"))
	require.NoError(t, err)
	require.Equal(t, "MQ_INST_123_abc%g", c.group)
	require.Equal(t, []string{"MQ_INST_123_abc.mq.example.com:80"}, c.cfg.nameServers)
	c, err = NewPushConsumer("g", WithNameServers("MQ_INST_123_abc.mq.example.com:80"), WithNamespace("mine"))
	require.NoError(t, err)
	require.Equal(t, "mine%g", c.group, "the option wins")
}
