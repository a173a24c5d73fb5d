package fakebroker

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// The golden runs h0_sql92_no_filter (a broker without enablePropertyFilter) and h_sql92
// (with it), replayed request by request: every answer must be the real broker's.

// requireSameAnswer compares an answer with the real broker's: code, remark, ext fields
// (present or not, and their values but those that vary) and the goldenIndex of each
// message.
func requireSameAnswer(t *testing.T, want, got *remoting.Command, what string) {
	t.Helper()
	require.Equal(t, want.Code, got.Code, "%s: %s", what, got.Remark)
	require.Equal(t, want.Remark, got.Remark, what)
	require.Equal(t, want.ExtFields == nil, got.ExtFields == nil, "%s: ext fields present", what)
	require.ElementsMatch(t, keys(want), keys(got), what)
	for _, k := range keys(want) {
		require.Equal(t, want.ExtFields.Value(k), got.ExtFields.Value(k), "%s: %s", what, k)
	}
	require.Equal(t, goldenIndexes(t, want), goldenIndexes(t, got), what)
}

// goldenIndexes returns the goldenIndex and queue offset of each message of a pull
// answer.
func goldenIndexes(t *testing.T, resp *remoting.Command) []string {
	t.Helper()
	if resp.Code != protocol.ResponseSuccess || len(resp.Body) == 0 {
		return nil
	}
	msgs, err := message.DecodeAll(resp.Body)
	require.NoError(t, err)
	var out []string
	for _, m := range msgs {
		idx, _ := m.Properties.Get("goldenIndex")
		out = append(out, fmt.Sprintf("%s@%d:%d", idx, m.QueueID, m.QueueOffset))
	}
	return out
}

// sendGoldenSQL replays h_sql92's sends from..to (request frames, each followed by its
// answer) and checks that each message lands where it did on the real broker.
func sendGoldenSQL(t *testing.T, cl *client, addr string, frames ...int) {
	t.Helper()
	for _, n := range frames {
		req := golden(t, "h_sql92", fmt.Sprintf("%04d", n))
		require.Equal(t, protocol.RequestSendMessageV2, req.Code)
		resp := cl.replay(addr, req)
		want := golden(t, "h_sql92", sendAnswer(t, n))
		require.Equal(t, want.Code, resp.Code, resp.Remark)
		for _, k := range []string{"queueId", "queueOffset"} {
			require.Equal(t, want.ExtFields.Value(k), resp.ExtFields.Value(k), "send %04d: %s", n, k)
		}
	}
}

// sendAnswer returns the number of the first send answer after frame n.
func sendAnswer(t *testing.T, n int) string {
	t.Helper()
	for k := n + 1; k < n+10; k++ {
		if m, _ := filepath.Glob(filepath.Join("testdata", "h_sql92", fmt.Sprintf("%04d-s2c-resp-SEND_MESSAGE_V2*", k))); len(m) == 1 {
			return fmt.Sprintf("%04d", k)
		}
	}
	t.Fatalf("no answer to send %04d", n)
	return ""
}

func TestGoldenCheckClientConfig(t *testing.T) {
	t.Run("no property filter", func(t *testing.T) {
		c := startCluster(t, WithTopic("GoldenH0SqlTopic", 2))
		cl := newClient(t)
		got := cl.replay(c.Broker("broker-a").Addr(), golden(t, "h0_sql92_no_filter", "0019"))
		requireSameAnswer(t, golden(t, "h0_sql92_no_filter", "0020"), got, "0019")
		require.Nil(t, got.ExtFields)
	})
	c := startCluster(t, WithTopic("GoldenHSqlTopic", 2), WithPropertyFilter(true))
	cl := newClient(t)
	addr := c.Broker("broker-a").Addr()
	for _, p := range []struct{ req, resp string }{{"0073", "0075"}, {"0230", "0232"}} {
		got := cl.replay(addr, golden(t, "h_sql92", p.req))
		requireSameAnswer(t, golden(t, "h_sql92", p.resp), got, p.req)
	}
	// The check registers nothing: without a heartbeat the group has no filter data.
	require.Empty(t, c.Broker("broker-a").Groups())
}

func TestCheckClientConfigCases(t *testing.T) {
	check := func(cl *client, addr, typ, expr string) *remoting.Command {
		body := protocol.CheckClientConfigBody{ClientID: "c@1", Group: "G",
			SubscriptionData: protocol.SubscriptionData{Topic: "T", SubString: expr, ExpressionType: typ,
				TagsSet: []string{}, CodeSet: []int32{}, SubVersion: 1}}
		return cl.invoke(addr, remoting.NewRequest(protocol.RequestCheckClientConfig, nil, body.Encode(protocol.StyleStandard)))
	}
	off := startCluster(t)
	on := startCluster(t, WithPropertyFilter(true))
	cl := newClient(t)
	for _, tc := range []struct {
		on         bool
		typ, expr  string
		code       int32
		remarkHead string
	}{
		{false, "TAG", "a || b", protocol.ResponseSuccess, ""},
		{false, "", "*", protocol.ResponseSuccess, ""},
		{false, "SQL92", "a > AND", protocol.ResponseSystemError, "The broker does not support consumer to filter message by SQL92"},
		{false, "FOO", "x", protocol.ResponseSystemError, "The broker does not support consumer to filter message by FOO"},
		{true, "SQL92", "region IN ('eu','us') AND amount > 100", protocol.ResponseSuccess, ""},
		{true, "SQL92", "", protocol.ResponseSubscriptionParseFailed, "org.apache.rocketmq.filter.parser.ParseException: Encountered \"<EOF>\" at line 0, column 0."},
		{true, "SQL92", "a > 'x'", protocol.ResponseSubscriptionParseFailed, "java.lang.RuntimeException: Value ''x'' cannot be compared."},
		{true, "FOO", "x", protocol.ResponseSubscriptionParseFailed, "Cannot invoke \"org.apache.rocketmq.filter.FilterSpi.compile(String)\""},
	} {
		c := off
		if tc.on {
			c = on
		}
		resp := check(cl, c.Broker("broker-a").Addr(), tc.typ, tc.expr)
		require.Equal(t, tc.code, resp.Code, "%s %q: %s", tc.typ, tc.expr, resp.Remark)
		require.True(t, len(resp.Remark) >= len(tc.remarkHead) && resp.Remark[:len(tc.remarkHead)] == tc.remarkHead,
			"%s %q: remark %q", tc.typ, tc.expr, resp.Remark)
		require.Nil(t, resp.ExtFields)
	}
	resp := cl.invoke(on.Broker("broker-a").Addr(), remoting.NewRequest(protocol.RequestCheckClientConfig, nil, []byte("{")))
	require.Equal(t, protocol.ResponseSystemError, resp.Code)
}

// TestGoldenSQLPulls replays the Java consumer of h_sql92: its heartbeats register the
// filter, its pulls get exactly the real broker's answers, a held pull is woken only by
// a message the expression selects, and of the 20 messages "a > 5 AND b = 'x'" selects
// goldenIndex 6, 8, 10, 14 and 19.
func TestGoldenSQLPulls(t *testing.T) {
	c := startCluster(t, WithTopic("GoldenHSqlTopic", 2), WithPropertyFilter(true), WithHoldCheckInterval(20*time.Millisecond))
	cl := newClient(t)
	addr := c.Broker("broker-a").Addr()
	sendGoldenSQL(t, cl, addr, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31)
	for _, hb := range []string{"0076", "0089"} {
		require.Equal(t, protocol.ResponseSuccess, cl.replay(addr, golden(t, "h_sql92", hb)).Code)
	}
	requireSameAnswer(t, golden(t, "h_sql92", "0093"), cl.replay(addr, golden(t, "h_sql92", "0090")), "0090")
	requireSameAnswer(t, golden(t, "h_sql92", "0094"), cl.replay(addr, golden(t, "h_sql92", "0091")), "0091")

	// Held at offset 5 of both queues; goldenIndex 10 (a=10, b=x) wakes queue 0's,
	// goldenIndex 11 (no b) does not wake queue 1's: the periodic check answers it.
	held0 := cl.async(addr, golden(t, "h_sql92", "0095"))
	held1 := cl.async(addr, golden(t, "h_sql92", "0098"))
	require.Eventually(t, func() bool { return c.Broker("broker-a").HeldPulls() == 2 }, callTimeout, time.Millisecond)
	sendGoldenSQL(t, cl, addr, 126)
	requireSameAnswer(t, golden(t, "h_sql92", "0129"), await(t, held0), "0095")
	sendGoldenSQL(t, cl, addr, 130)
	requireSameAnswer(t, golden(t, "h_sql92", "0135"), await(t, held1), "0098")

	sendGoldenSQL(t, cl, addr, 133, 138, 144, 150, 156, 158, 160, 162)
	var selected []int
	for q := range int32(2) {
		for off := int64(0); off < 10; {
			resp := cl.invoke(addr, withSubVersion(pullRequest("GoldenHSqlGroup", "GoldenHSqlTopic", q, off, 32, 0, 0, ""),
				"SQL92", 1796176368442))
			h, msgs := pullResult(t, resp)
			for _, m := range msgs {
				idx, _ := m.Properties.Get("goldenIndex")
				n, err := strconv.Atoi(idx)
				require.NoError(t, err)
				selected = append(selected, n)
			}
			require.Greater(t, h.NextBeginOffset, off)
			off = h.NextBeginOffset
		}
	}
	slices.Sort(selected)
	require.Equal(t, []int{6, 8, 10, 14, 19}, selected)
}

// withSubVersion sets a pull's expression type and subscription version.
func withSubVersion(req *remoting.Command, typ string, v int64) *remoting.Command {
	req = withField(req, "expressionType", typ)
	return withField(req, "subVersion", strconv.FormatInt(v, 10))
}

// TestGoldenSQLRefusals replays h0 (no property filter: SYSTEM_ERROR) and h_sql92's bad
// expression: SUBSCRIPTION_NOT_LATEST while the heartbeat lags the pull, then
// FILTER_DATA_NOT_EXIST, though every heartbeat is answered SUCCESS.
func TestGoldenSQLRefusals(t *testing.T) {
	t.Run("no property filter", func(t *testing.T) {
		c := startCluster(t, WithTopic("GoldenH0SqlTopic", 2))
		cl := newClient(t)
		addr := c.Broker("broker-a").Addr()
		require.Equal(t, protocol.ResponseSuccess, cl.replay(addr, golden(t, "h0_sql92_no_filter", "0021")).Code)
		requireSameAnswer(t, golden(t, "h0_sql92_no_filter", "0037"), cl.replay(addr, golden(t, "h0_sql92_no_filter", "0034")), "0034")
	})
	c := startCluster(t, WithTopic("GoldenHSqlTopic", 2), WithPropertyFilter(true))
	cl := newClient(t)
	addr := c.Broker("broker-a").Addr()
	require.Equal(t, protocol.ResponseSuccess, cl.replay(addr, golden(t, "h_sql92", "0233")).Code)
	requireSameAnswer(t, golden(t, "h_sql92", "0249"), cl.replay(addr, golden(t, "h_sql92", "0247")), "0247 before 0246")
	require.Equal(t, protocol.ResponseSuccess, cl.replay(addr, golden(t, "h_sql92", "0246")).Code)
	requireSameAnswer(t, golden(t, "h_sql92", "0250"), cl.replay(addr, golden(t, "h_sql92", "0247")), "0247 after 0246")
}

// TestFilterDataRegistration follows ConsumerFilterManager's rules through heartbeats
// and pulls.
func TestFilterDataRegistration(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1), WithPropertyFilter(true))
	b := c.Broker("broker-a")
	_, err := b.Produce("T", 0,
		&message.Message{Body: []byte("eu"), Properties: message.PropertiesOf(message.Property{Name: "region", Value: "eu"})},
		&message.Message{Body: []byte("us"), Properties: message.PropertiesOf(message.Property{Name: "region", Value: "us"})})
	require.NoError(t, err)
	cl := newClient(t)
	heartbeat := func(expr string, v int64) {
		t.Helper()
		hb := protocol.HeartbeatData{ClientID: "c@1", ConsumerDataSet: []protocol.ConsumerData{{GroupName: "G",
			ConsumeType: protocol.ConsumePassively, MessageModel: protocol.Clustering, ConsumeFromWhere: protocol.ConsumeFromFirstOffset,
			SubscriptionDataSet: []protocol.SubscriptionData{{Topic: "T", SubString: expr, ExpressionType: "SQL92",
				TagsSet: []string{}, CodeSet: []int32{}, SubVersion: v}}}}}
		resp := cl.invoke(b.Addr(), remoting.NewRequest(protocol.RequestHeartBeat, nil, hb.Encode(protocol.StyleStandard)))
		require.Equal(t, protocol.ResponseSuccess, resp.Code, resp.Remark)
	}
	pull := func(v int64) (int32, []string) {
		t.Helper()
		resp := cl.invoke(b.Addr(), withSubVersion(pullRequest("G", "T", 0, 0, 32, 0, 0, ""), "SQL92", v))
		if resp.Code != protocol.ResponseSuccess {
			return resp.Code, nil
		}
		_, msgs := pullResult(t, resp)
		return resp.Code, bodies(msgs)
	}
	heartbeat("region = 'eu'", 10)
	code, got := pull(10)
	require.Equal(t, protocol.ResponseSuccess, code)
	require.Equal(t, []string{"eu"}, got)
	// An older version changes nothing, even with another expression.
	heartbeat("region = 'us'", 5)
	_, got = pull(10)
	require.Equal(t, []string{"eu"}, got)
	// A pull newer than the filter data, once the group's subscription is that new: the
	// same expression at a newer version only takes the version.
	code, _ = pull(11)
	require.Equal(t, protocol.ResponseSubscriptionNotLatest, code)
	heartbeat("region = 'eu'", 11)
	_, got = pull(11)
	require.Equal(t, []string{"eu"}, got)
	// A newer version with a new expression replaces it.
	heartbeat("region = 'us'", 12)
	_, got = pull(12)
	require.Equal(t, []string{"us"}, got)
	// A newer one that does not compile removes it.
	heartbeat("region = ", 13)
	code, _ = pull(13)
	require.Equal(t, protocol.ResponseFilterDataNotExist, code)

	// An expression posted with the pull filters it; one that does not compile filters
	// nothing (4.9.8 builds no filter data for it and lets everything through).
	posted := func(expr string) []string {
		t.Helper()
		resp := cl.invoke(b.Addr(), withField(pullRequest("X", "T", 0, 0, 32, subFlag, 0, expr), "expressionType", "SQL92"))
		require.Equal(t, protocol.ResponseSuccess, resp.Code, resp.Remark)
		_, msgs := pullResult(t, resp)
		return bodies(msgs)
	}
	require.Equal(t, []string{"us"}, posted("region <> 'eu'"))
	require.Equal(t, []string{"eu", "us"}, posted("region <>"))
	resp := cl.invoke(b.Addr(), withField(pullRequest("X", "T", 0, 0, 32, subFlag, 0, ""), "expressionType", "SQL92"))
	require.Equal(t, protocol.ResponseSubscriptionParseFailed, resp.Code)
}

// A held pull of an SQL92 subscription is woken by a message its expression selects,
// not by others (PullRequestHoldService evaluates the new message's properties).
func TestHeldSQLPullWokenOnlyByMatch(t *testing.T) {
	c := startCluster(t, WithTopic("T", 1), WithPropertyFilter(true), WithHoldCheckInterval(time.Hour))
	b := c.Broker("broker-a")
	cl := newClient(t)
	hb := protocol.HeartbeatData{ClientID: "c@1", ConsumerDataSet: []protocol.ConsumerData{{GroupName: "G",
		ConsumeType: protocol.ConsumePassively, MessageModel: protocol.Clustering, ConsumeFromWhere: protocol.ConsumeFromFirstOffset,
		SubscriptionDataSet: []protocol.SubscriptionData{{Topic: "T", SubString: "amount > 100", ExpressionType: "SQL92",
			TagsSet: []string{}, CodeSet: []int32{}, SubVersion: 1}}}}}
	require.Equal(t, protocol.ResponseSuccess,
		cl.invoke(b.Addr(), remoting.NewRequest(protocol.RequestHeartBeat, nil, hb.Encode(protocol.StyleStandard))).Code)
	held := cl.async(b.Addr(), withSubVersion(pullRequest("G", "T", 0, 0, 32, protocol.PullSysFlagSuspend, 10*time.Second, ""), "SQL92", 1))
	require.Eventually(t, func() bool { return b.HeldPulls() == 1 }, callTimeout, time.Millisecond)
	produce := func(amount string) {
		t.Helper()
		_, err := b.Produce("T", 0, &message.Message{Body: []byte(amount),
			Properties: message.PropertiesOf(message.Property{Name: "amount", Value: amount})})
		require.NoError(t, err)
	}
	produce("50")
	notAnswered(t, held)
	require.Equal(t, 1, b.HeldPulls())
	produce("150")
	resp := await(t, held)
	require.Equal(t, protocol.ResponseSuccess, resp.Code, resp.Remark)
	_, msgs := pullResult(t, resp)
	require.Equal(t, []string{"150"}, bodies(msgs))
}
