package consumer

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// clearNameServerEnv unsets, for the test, the environment variables a consumer reads
// when it is given no name server.
func clearNameServerEnv(t *testing.T) {
	t.Helper()
	for _, env := range []string{envNameServerAddr, envNamesrvAddr, envNameServerDomain, envNameServerSubgroup} {
		t.Setenv(env, "")
	}
}

// Java's order: the option, then rocketmq.namesrv.addr, then NAMESRV_ADDR, then the
// address service of the domain.
func TestNameServerSources(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		opts  []Option
		addrs []string
		url   string
	}{
		{"option first", map[string]string{envNameServerAddr: "p:1", envNamesrvAddr: "e:1", envNameServerDomain: "d"},
			[]Option{WithNameServers("o:1;o:2")}, []string{"o:1", "o:2"}, ""},
		{"then the property", map[string]string{envNameServerAddr: "p:1; p:2;", envNamesrvAddr: "e:1", envNameServerDomain: "d"},
			nil, []string{"p:1", "p:2"}, ""},
		{"then NAMESRV_ADDR", map[string]string{envNamesrvAddr: "e:1", envNameServerDomain: "d"}, nil, []string{"e:1"}, ""},
		{"then the domain option", map[string]string{envNameServerDomain: "d"}, []Option{WithNameServerDomain("jmenv.example")},
			nil, "http://jmenv.example:8080/rocketmq/nsaddr"},
		{"then the domain property", map[string]string{envNameServerDomain: "127.0.0.1:8081"}, nil,
			nil, "http://127.0.0.1:8081/rocketmq/nsaddr"},
		{"with a subgroup", map[string]string{envNameServerDomain: "d", envNameServerSubgroup: "nsaddr-unit1"}, nil,
			nil, "http://d:8080/rocketmq/nsaddr-unit1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearNameServerEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c, err := NewPushConsumer("g", tc.opts...)
			require.NoError(t, err)
			require.Equal(t, tc.addrs, c.cfg.nameServers)
			require.Equal(t, tc.url, c.cfg.nameServerURL)
		})
	}
}

func TestNoNameServerSaysEveryWay(t *testing.T) {
	clearNameServerEnv(t)
	_, err := NewPushConsumer("g")
	require.Error(t, err)
	for _, way := range []string{"WithNameServers", "NAMESRV_ADDR", "rocketmq.namesrv.addr", "WithNameServerDomain", "rocketmq.namesrv.domain"} {
		require.ErrorContains(t, err, way)
	}

	t.Setenv(envNamesrvAddr, "127.0.0.1")
	_, err = NewPushConsumer("g")
	require.ErrorContains(t, err, "NAMESRV_ADDR", "a bad address names where it came from")
	clearNameServerEnv(t)
	_, err = NewPushConsumer("g", WithNameServerDomain("http://x/y"))
	require.ErrorContains(t, err, "WithNameServerDomain")
	t.Setenv(envNamesrvAddr, "MQ_INST_1_a.example:9876")
	c, err := NewPushConsumer("g")
	require.NoError(t, err)
	require.Equal(t, "MQ_INST_1_a%g", c.group, "an instance endpoint from the environment gives the namespace too")
}
