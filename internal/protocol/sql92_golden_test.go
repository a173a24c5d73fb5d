package protocol

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/remoting"
)

// goldenSQLFrame decodes a frame copied from the SQL92 captures.
func goldenSQLFrame(t *testing.T, scenario, n string) *remoting.Command {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join("testdata", scenario, n+"-*.bin"))
	require.NoError(t, err)
	require.Len(t, matches, 1, "%s/%s", scenario, n)
	data, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	cmd, err := remoting.DecodeFrame(data)
	require.NoError(t, err)
	return cmd
}

// Java's CHECK_CLIENT_CONFIG: no ext fields, and a body we write byte for byte the same.
func TestGoldenCheckClientConfigBody(t *testing.T) {
	for _, f := range []struct{ scenario, n, group, topic string }{
		{"h_sql92", "0073", "GoldenHSqlGroup", "GoldenHSqlTopic"},
		{"h0_sql92_no_filter", "0019", "GoldenH0SqlGroup", "GoldenH0SqlTopic"},
	} {
		req := goldenSQLFrame(t, f.scenario, f.n)
		require.Equal(t, RequestCheckClientConfig, req.Code)
		require.Nil(t, req.ExtFields, "%s/%s: no ext fields", f.scenario, f.n)
		var body CheckClientConfigBody
		require.NoError(t, body.Decode(req.Body))
		require.Equal(t, f.group, body.Group)
		sd := body.SubscriptionData
		require.Equal(t, SubscriptionData{Topic: f.topic, SubString: "a > 5 AND b = 'x'", ExpressionType: ExpressionTypeSQL92,
			TagsSet: []string{}, CodeSet: []int32{}, SubVersion: sd.SubVersion}, sd)
		want, err := BuildSubscriptionOfType(f.topic, ExpressionTypeSQL92, "a > 5 AND b = 'x'")
		require.NoError(t, err)
		want.SubVersion = sd.SubVersion
		ours := CheckClientConfigBody{ClientID: body.ClientID, Group: f.group, SubscriptionData: want}
		require.Equal(t, string(req.Body), string(ours.Encode(StyleStandard)))
	}
}

// Heartbeats with an SQL92 subscription, Java's and the peer's (which escapes > as
// \u003e), and Java's pull of it: expressionType SQL92, its ms subVersion, no
// subscription field.
func TestGoldenSQL92HeartbeatsAndPull(t *testing.T) {
	for _, n := range []string{"0043", "0076"} {
		var hb HeartbeatData
		require.NoError(t, hb.Decode(goldenSQLFrame(t, "h_sql92", n).Body))
		var found bool
		for _, sd := range hb.ConsumerDataSet[0].SubscriptionDataSet {
			if sd.ExpressionType == ExpressionTypeSQL92 {
				found = true
				require.Equal(t, "a > 5 AND b = 'x'", sd.SubString, n)
				require.Empty(t, sd.TagsSet, n)
				require.Empty(t, sd.CodeSet, n)
			}
		}
		require.True(t, found, n)
	}
	req := goldenSQLFrame(t, "h_sql92", "0090")
	var h PullMessageRequest
	require.NoError(t, h.Decode(req.ExtFields))
	require.Equal(t, ExpressionTypeSQL92, h.ExpressionType)
	require.Equal(t, int64(1796176367526), h.SubVersion)
	_, posted := req.ExtFields.Get("subscription")
	require.False(t, posted)
	require.ElementsMatch(t, keysOf(req.ExtFields), keysOf(h.Encode()))
}

func keysOf(f remoting.Fields) []string {
	out := make([]string, len(f))
	for i, kv := range f {
		out[i] = kv.Key
	}
	return out
}
