package client

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// goldenPopFrame reads one frame of the golden p_pop_533 capture.
func goldenPopFrame(t *testing.T, file string) *remoting.Command {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "p_pop_533", file))
	require.NoError(t, err)
	cmd, err := remoting.DecodeFrame(data)
	require.NoError(t, err)
	return cmd
}

// goldenConsumed returns what the Java listener saw of each delivery, by UNIQ_KEY and
// reconsume times.
func goldenConsumed(t *testing.T) map[string]map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "p_pop_533", "consumed.json"))
	require.NoError(t, err)
	var consumed []struct {
		ReconsumeTimes int               `json:"reconsumeTimes"`
		Properties     map[string]string `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(data, &consumed))
	out := map[string]map[string]string{}
	for _, c := range consumed {
		out[c.Properties["UNIQ_KEY"]+"/"+string(rune('0'+c.ReconsumeTimes))] = c.Properties
	}
	return out
}

// The answers of a real 5.3.3 broker to POP_MESSAGE give every message the handle and
// first pop time the Java client gave it (its listener's view, consumed.json): the 20
// first deliveries of one answer, and the revived retry, whose handle the broker made.
func TestGoldenPopAnswersGiveJavasHandles(t *testing.T) {
	consumed := goldenConsumed(t)
	req := remoting.NewRequest(protocol.RequestPopMessage, nil, nil)
	total := 0
	for _, file := range []string{"0080-s2c-resp-POP_MESSAGE.bin", "0122-s2c-resp-POP_MESSAGE.bin"} {
		res, err := popResult("127.0.0.1:10931", req, goldenPopFrame(t, file))
		require.NoError(t, err)
		require.Equal(t, PopFound, res.Status)
		msgs, err := (&message.Decoder{}).DecodeAll(res.Body)
		require.NoError(t, err)
		require.NoError(t, SetPopHandles("broker-5a", &res.Header, msgs))
		for _, m := range msgs {
			total++
			saw := consumed[m.Properties.Value(message.PropertyUniqKey)+"/"+string(rune('0'+m.ReconsumeTimes))]
			require.NotNil(t, saw, "%s: %s", file, m.MsgID())
			require.Equal(t, saw[protocol.PropertyPopCK], m.Properties.Value(protocol.PropertyPopCK), "%s: %s", file, m.MsgID())
			require.Equal(t, saw[protocol.PropertyFirstPopTime], m.Properties.Value(protocol.PropertyFirstPopTime))
			require.Equal(t, "broker-5a", m.BrokerName)
		}
	}
	require.Equal(t, 21, total)

	res, err := popResult("a", req, goldenPopFrame(t, "0156-s2c-resp-POP_MESSAGE-POLLING_TIMEOUT.bin"))
	require.NoError(t, err)
	require.Equal(t, PopNotFound, res.Status)
	require.Equal(t, int64(60000), res.Header.InvisibleTime)
	require.Empty(t, res.Body)
}

// An answer whose offset infos do not account for its messages is refused.
func TestSetPopHandlesRefusesAnInconsistentAnswer(t *testing.T) {
	res, err := popResult("a", remoting.NewRequest(protocol.RequestPopMessage, nil, nil), goldenPopFrame(t, "0080-s2c-resp-POP_MESSAGE.bin"))
	require.NoError(t, err)
	for _, bad := range []protocol.PopMessageResponse{
		{MsgOffsetInfo: res.Header.MsgOffsetInfo},                             // no start offsets
		{StartOffsetInfo: res.Header.StartOffsetInfo, MsgOffsetInfo: "0 0 0"}, // too few offsets
		{StartOffsetInfo: "0 0 0;0 0 1", MsgOffsetInfo: "0 0 0"},              // a queue twice
	} {
		msgs, err := (&message.Decoder{}).DecodeAll(res.Body)
		require.NoError(t, err)
		require.Error(t, SetPopHandles("broker-5a", &bad, msgs), "%+v", bad)
	}
}

func TestGoldenChangeInvisibleTimeAnswer(t *testing.T) {
	cmd := goldenPopFrame(t, "0121-s2c-resp-CHANGE_MESSAGE_INVISIBLETIME.bin")
	var h protocol.ChangeInvisibleTimeResponse
	require.NoError(t, h.Decode(cmd.ExtFields))
	require.Equal(t, int64(1796177259985), h.PopTime)
}
