package consumer

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/logging"
	"github.com/rmqpush/rmqpush/rebalance"
)

func TestNewPushConsumerValidatesOptions(t *testing.T) {
	clearNameServerEnv(t)
	ns := WithNameServers("127.0.0.1:9876")
	for _, tc := range []struct {
		name   string
		group  string
		opts   []Option
		option string // the option the error must name; "" means valid
	}{
		{"defaults", "g", []Option{ns}, ""},
		{"no name server", "g", nil, "WithNameServers"},
		{"name server without port", "g", []Option{WithNameServers("localhost")}, "WithNameServers"},
		{"several name servers", "g", []Option{WithNameServers("a:1;b:2", "c:3")}, ""},
		{"workers 0", "g", []Option{ns, WithConsumeGoroutineNums(0)}, "WithConsumeGoroutineNums"},
		{"batch 1025", "g", []Option{ns, WithConsumeMessageBatchMaxSize(1025)}, "WithConsumeMessageBatchMaxSize"},
		{"pull batch 0", "g", []Option{ns, WithPullBatchSize(0)}, "WithPullBatchSize"},
		{"span", "g", []Option{ns, WithConsumeConcurrentlyMaxSpan(0)}, "WithConsumeConcurrentlyMaxSpan"},
		{"queue threshold", "g", []Option{ns, WithPullThresholdForQueue(70000)}, "WithPullThresholdForQueue"},
		{"queue size", "g", []Option{ns, WithPullThresholdSizeForQueue(0)}, "WithPullThresholdSizeForQueue"},
		{"topic threshold off", "g", []Option{ns, WithPullThresholdForTopic(-1)}, ""},
		{"topic threshold 0", "g", []Option{ns, WithPullThresholdForTopic(0)}, "WithPullThresholdForTopic"},
		{"topic size", "g", []Option{ns, WithPullThresholdSizeForTopic(0)}, "WithPullThresholdSizeForTopic"},
		{"pull interval", "g", []Option{ns, WithPullInterval(-time.Second)}, "WithPullInterval"},
		{"max reconsume", "g", []Option{ns, WithMaxReconsumeTimes(-2)}, "WithMaxReconsumeTimes"},
		{"suspend", "g", []Option{ns, WithSuspendCurrentQueueTime(time.Millisecond)}, "WithSuspendCurrentQueueTime"},
		{"consume timeout", "g", []Option{ns, WithConsumeTimeout(0)}, "WithConsumeTimeout"},
		{"read loop consume off", "g", []Option{ns, WithReadLoopConsume(0)}, ""},
		{"read loop consume negative", "g", []Option{ns, WithReadLoopConsume(-time.Microsecond)}, "WithReadLoopConsume"},
		{"read loop consume past the takeover", "g", []Option{ns, WithReadLoopConsume(2 * time.Millisecond)}, "WithReadLoopConsume"},
		{"lent bodies", "g", []Option{ns, WithLentBodies()}, ""},
		{"lent bodies broadcasting", "g", []Option{ns, WithLentBodies(), WithMessageModel(Broadcasting)}, ""},
		{"lent bodies with pop", "g", []Option{ns, WithLentBodies(), WithClientRebalance(false)}, ""},
		{"client ip", "g", []Option{ns, WithClientIP("10.0.0.1@x")}, "WithClientIP"},
		{"nil logger means none", "g", []Option{ns, WithLogger(nil)}, ""},
		{"slog logger", "g", []Option{ns, WithLogger(logging.Slog(slog.Default()))}, ""},
		{"nil hook", "g", []Option{ns, WithHooks(nil)}, "WithHooks"},
		{"hook of no kind", "g", []Option{ns, WithHooks(struct{}{})}, "WithHooks"},
		{"grace", "g", []Option{ns, WithTakeoverGrace(-1)}, "WithTakeoverGrace"},
		{"commit", "g", []Option{ns, WithCommitInterval(-1)}, "WithCommitInterval"},
		{"commit off", "g", []Option{ns, WithCommitInterval(0)}, ""},
		{"headers", "g", []Option{ns, WithHeaderEncoding(HeaderRocketMQ)}, ""},
		{"bad headers", "g", []Option{ns, WithHeaderEncoding(9)}, "WithHeaderEncoding"},
		{"heartbeat", "g", []Option{ns, WithHeartbeatInterval(0)}, "WithHeartbeatInterval"},
		{"persist", "g", []Option{ns, WithPersistConsumerOffsetInterval(time.Millisecond)}, "WithPersistConsumerOffsetInterval"},
		{"model", "g", []Option{ns, WithMessageModel(7)}, "WithMessageModel"},
		{"from where", "g", []Option{ns, WithConsumeFromWhere(9)}, "WithConsumeFromWhere"},
		{"instance", "g", []Option{ns, WithInstanceName("a@b")}, "WithInstanceName"},
		{"credentials", "g", []Option{ns, WithCredentials(Credentials{AccessKey: "ak"})}, "WithCredentials"},
		{"strategy", "g", []Option{ns, WithAllocateStrategy(nil)}, "WithAllocateStrategy"},
		{"pop", "g", []Option{ns, WithClientRebalance(false), WithPopInvisibleTime(time.Second), WithPopBatchSize(1),
			WithPopThresholdForQueue(1), WithPopDelayLevels(10 * time.Millisecond), WithLongPollTime(100 * time.Millisecond)}, ""},
		{"pop invisible", "g", []Option{ns, WithPopInvisibleTime(301 * time.Second)}, "WithPopInvisibleTime"},
		{"pop batch", "g", []Option{ns, WithPopBatchSize(33)}, "WithPopBatchSize"},
		{"pops in flight", "g", []Option{ns, WithPopsInFlight(0)}, "WithPopsInFlight"},
		{"pop threshold", "g", []Option{ns, WithPopThresholdForQueue(0)}, "WithPopThresholdForQueue"},
		{"pop delays none", "g", []Option{ns, WithPopDelayLevels()}, "WithPopDelayLevels"},
		{"pop delay short", "g", []Option{ns, WithPopDelayLevels(time.Millisecond)}, "WithPopDelayLevels"},
		{"long poll", "g", []Option{ns, WithLongPollTime(time.Hour)}, "WithLongPollTime"},
		{"server strategy", "g", []Option{ns, WithClientRebalance(false), WithAllocateStrategy(rebalance.AveragelyByCircle{})}, ""},
		{"strategy the brokers lack", "g", []Option{ns, WithClientRebalance(false), WithAllocateStrategy(rebalance.NewByConfig(nil))}, "WithClientRebalance"},
		{"empty group", "", []Option{ns}, "group"},
		{"bad group", "a b", []Option{ns}, "group"},
		{"reserved group", "DEFAULT_CONSUMER", []Option{ns}, "DEFAULT_CONSUMER"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewPushConsumer(tc.group, tc.opts...)
			if tc.option == "" {
				require.NoError(t, err)
				require.NotNil(t, c)
				return
			}
			require.ErrorContains(t, err, tc.option)
		})
	}
}

func TestDefaultsAreJavas(t *testing.T) {
	c := defaultCfg()
	require.True(t, c.clientRebalance)
	require.Equal(t, 60*time.Second, c.popInvisibleTime)
	require.Equal(t, 32, c.popBatchSize)
	require.Equal(t, 96, c.popThresholdForQueue)
	require.Equal(t, 4, c.popsInFlight, "rmqpush's; Java pops one at a time")
	require.Len(t, c.popDelayLevels, 16)
	require.Equal(t, 10*time.Second, c.popDelayLevels[0])
	require.Equal(t, 2*time.Hour, c.popDelayLevels[15])
	require.Equal(t, 20, c.consumeGoroutines)
	require.Equal(t, 1, c.consumeBatchMaxSize)
	require.Equal(t, 32, c.pullBatchSize)
	require.Equal(t, 2000, c.maxSpan)
	require.Equal(t, 1000, c.pullThresholdForQueue)
	require.Equal(t, 100, c.pullThresholdSizeMiB)
	require.Equal(t, -1, c.pullThresholdForTopic)
	require.Equal(t, -1, c.maxReconsumeTimes)
	require.Equal(t, 15*time.Minute, c.consumeTimeout)
	require.Equal(t, time.Second, c.suspendCurrentQueueTime)
	require.Equal(t, 5*time.Second, c.persistInterval)
	require.Equal(t, 20*time.Second, c.rebalanceInterval)
	require.Equal(t, 15*time.Second, c.pullSuspend)
	require.Equal(t, 30*time.Second, c.pullTimeout)
	require.Equal(t, ConsumeFromLastOffset, c.consumeFrom)
	require.Equal(t, "AVG", c.allocateStrategy.Name())
}

func TestSubscribeAndRegisterRules(t *testing.T) {
	c, err := NewPushConsumer("g", WithNameServers("127.0.0.1:9876"))
	require.NoError(t, err)
	require.NoError(t, c.Subscribe("s", SQL92("a > 1 AND b = 'x'")))
	sd, ok := c.subscription("s")
	require.True(t, ok)
	require.Equal(t, "SQL92", sd.ExpressionType)
	require.Equal(t, "a > 1 AND b = 'x'", sd.SubString)
	require.Empty(t, sd.TagsSet)
	require.Positive(t, sd.SubVersion)
	require.Error(t, c.Subscribe("", All()))
	require.NoError(t, c.Subscribe("t", Tags("a", "b")))
	sd, ok = c.subscription("t")
	require.True(t, ok)
	require.Equal(t, []string{"a", "b"}, sd.TagsSet)
	require.Positive(t, sd.SubVersion, "subVersion in ms")
	require.Less(t, sd.SubVersion, int64(1)<<42, "milliseconds, not nanoseconds")

	require.Error(t, c.RegisterListener(nil))
	require.Error(t, c.RegisterListener(42))
	require.NoError(t, c.RegisterListener(ConcurrentlyFunc(nil)))
	require.Error(t, c.RegisterListener(ConcurrentlyFunc(nil)), "one listener per consumer")
	require.NoError(t, c.Shutdown(context.Background()), "shutting down a consumer never started is a no-op")

	lent, err := NewPushConsumer("g", WithNameServers("127.0.0.1:9876"), WithLentBodies())
	require.NoError(t, err)
	require.NoError(t, lent.RegisterListener(OrderlyFunc(nil)), "orderly lends too")
}

func TestClientID(t *testing.T) {
	c := defaultCfg()
	c.clientIP = "10.0.0.1"
	now := time.Unix(0, 12345)
	require.Regexp(t, `^10\.0\.0\.1@\d+#12345$`, c.clientID(now), "clustering replaces DEFAULT")
	c.model = Broadcasting
	require.Equal(t, "10.0.0.1@DEFAULT", c.clientID(now), "stable for the offsets file")
	c.instanceName = "mine"
	require.Equal(t, "10.0.0.1@mine", c.clientID(now))
}

// Subscribe refuses the SQL92 expressions that are wrong without parsing them; the
// brokers judge the rest (Start asks them).
func TestSubscribeChecksSQL92(t *testing.T) {
	c, err := NewPushConsumer("g", WithNameServers("127.0.0.1:9876"))
	require.NoError(t, err)
	for expr, want := range map[string]string{
		"":                          "empty",
		" \t\n":                     "empty",
		"-- only a comment\n":       "empty",
		"/* only */ /* comments */": "empty",
		"a = 'x":                    "string literal at byte 4",
		"a = 'it''s":                "never closed",
		"a = 1 /* open":             "comment at byte 6",
		"a = 'it''s'":               "",
		"a = 1 -- it's fine":        "",
		"a = '/* not a comment'":    "",
		"region IN ('eu', 'us') AND amount > 100": "",
	} {
		err := c.Subscribe("t", SQL92(expr))
		if want == "" {
			require.NoError(t, err, "%q", expr)
			continue
		}
		require.ErrorContains(t, err, want, "%q", expr)
		require.ErrorContains(t, err, `Subscribe("t", SQL92(`, "%q", expr)
	}
}

func TestSubscriptionRefusedErrorNamesTopicBrokerAndRemark(t *testing.T) {
	e := &SubscriptionRefusedError{Topic: "orders", Expression: "amount > 100", BrokerName: "broker-a",
		BrokerAddr: "127.0.0.1:10911", Code: 1, Remark: "The broker does not support consumer to filter message by SQL92"}
	require.Equal(t, `broker broker-a (127.0.0.1:10911) refused the SQL92 subscription of topic "orders" `+
		`("amount > 100"): code 1: The broker does not support consumer to filter message by SQL92 `+
		`(start the broker with enablePropertyFilter=true)`, e.Error())
	e.Code, e.Remark = 23, "org.apache.rocketmq.filter.parser.ParseException: ..."
	require.NotContains(t, e.Error(), "enablePropertyFilter")
}
