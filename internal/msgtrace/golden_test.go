package msgtrace

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// splitTrace is a decoder written from the format's description (golden README, "Notes
// on h–k"), not from the encoder: records end with 0x02, fields are separated by 0x01.
// It returns the records' fields and fails on a body that does not end a record.
func splitTrace(t *testing.T, body []byte) [][]string {
	t.Helper()
	require.NotEmpty(t, body)
	require.Equal(t, byte(0x02), body[len(body)-1], "the last record ends with 0x02 too")
	var out [][]string
	for _, rec := range bytes.Split(body[:len(body)-1], []byte{0x02}) {
		out = append(out, strings.Split(string(rec), "\x01"))
	}
	return out
}

func goldenFrame(t *testing.T, name string) *remoting.Command {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "golden", "i_trace", name))
	require.NoError(t, err)
	cmd, err := remoting.DecodeFrame(raw)
	require.NoError(t, err)
	return cmd
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err, s)
	return n
}

// nullable undoes Java's writing of a null String as "null".
func nullable(s string) string {
	if s == "null" {
		return ""
	}
	return s
}

// TestJavaConsumerTraceGolden decodes the trace messages a Java 4.9.8 consumer sent to
// a real broker (i_trace 0087 and 0098) and checks that encoding the same values gives
// the same bytes, record by record, and that the send is what Dispatcher sends.
func TestJavaConsumerTraceGolden(t *testing.T) {
	records := 0
	for _, name := range []string{"0087-c2s-code310-SEND_MESSAGE_V2.bin", "0098-c2s-code310-SEND_MESSAGE_V2.bin"} {
		cmd := goldenFrame(t, name)
		require.Equal(t, protocol.RequestSendMessageV2, cmd.Code)
		var h protocol.SendMessageRequest
		require.NoError(t, h.DecodeV2(cmd.ExtFields))
		require.Equal(t, ProducerGroup("GoldenITraceGroup"), h.ProducerGroup)
		require.Equal(t, DefaultTopic, h.Topic)
		require.Equal(t, "TBW102", h.DefaultTopic)
		require.Equal(t, int32(4), h.DefaultTopicQueueNums)
		require.Zero(t, h.SysFlag, "bodies under 4 KiB are not compressed")
		props := message.PropertiesFromWire(h.Properties)
		require.Equal(t, "true", props.Value(message.PropertyWaitStoreMsgOK))
		require.Len(t, props.Value(message.PropertyUniqKey), 32)
		keys := strings.Split(props.Value(message.PropertyKeys), " ")

		var rebuilt []byte
		for _, f := range splitTrace(t, cmd.Body) {
			records++
			switch f[0] {
			case TypeSubBefore:
				require.Len(t, f, 8, "Java's SubBefore has 8 fields")
				require.Equal(t, "null", f[2], "Java writes a null region as null")
				r := SubBefore{Timestamp: atoi(t, f[1]), RegionID: nullable(f[2]), Group: f[3], RequestID: f[4], MsgID: f[5],
					RetryTimes: int32(atoi(t, f[6])), Keys: nullable(f[7])}
				rebuilt = r.Append(rebuilt)
				require.Contains(t, keys, r.MsgID, "KEYS holds the traced msgIds")
				require.Contains(t, keys, r.Keys, "and their keys")
			case TypeSubAfter:
				require.Len(t, f, 9, "SubAfter has 9 fields")
				r := SubAfter{RequestID: f[1], MsgID: f[2], CostMillis: atoi(t, f[3]), Success: f[4] == "true", Keys: nullable(f[5]),
					ContextCode: int(atoi(t, f[6])), Timestamp: atoi(t, f[7]), Group: f[8]}
				require.Equal(t, "GoldenITraceGroup", r.Group)
				if !r.Success {
					require.Equal(t, 4, r.ContextCode, "RECONSUME_LATER: ConsumeReturnType FAILED")
				}
				rebuilt = r.Append(rebuilt)
			default:
				t.Fatalf("unexpected record type %q", f[0])
			}
		}
		require.Equal(t, string(cmd.Body), string(rebuilt), "%s: the same bytes", name)
	}
	require.Equal(t, 12, records, "10 records for the first 5 deliveries, 2 for the retry")
}

// TestGoConsumerTraceGolden decodes rocketmq-client-go's trace messages (i_trace 0150
// and 0162): the same SubAfter, and a SubBefore with a 9th field (the client host) and
// an empty region, which rmqpush does not copy (the Dashboard parses Java's).
func TestGoConsumerTraceGolden(t *testing.T) {
	for _, name := range []string{"0150-c2s-code10-SEND_MESSAGE.bin", "0162-c2s-code10-SEND_MESSAGE.bin"} {
		cmd := goldenFrame(t, name)
		require.Equal(t, protocol.RequestSendMessage, cmd.Code)
		require.Equal(t, "_INNER_TRACE_PRODUCER", cmd.ExtFields.Value("producerGroup"))
		for _, f := range splitTrace(t, cmd.Body) {
			switch f[0] {
			case TypeSubBefore:
				require.Len(t, f, 9)
				require.Empty(t, f[2])
				require.Equal(t, "GoldenIGoTraceGroup", f[3])
			case TypeSubAfter:
				require.Len(t, f, 9)
				require.Equal(t, "GoldenIGoTraceGroup", f[8])
			default:
				t.Fatalf("unexpected record type %q", f[0])
			}
		}
	}
}

// TestJavaProducerTraceGolden decodes the producer's Pub records (0033): 14 fields,
// which the same splitter reads; rmqpush writes no Pub records (it does not produce).
func TestJavaProducerTraceGolden(t *testing.T) {
	cmd := goldenFrame(t, "0033-c2s-code310-SEND_MESSAGE_V2.bin")
	recs := splitTrace(t, cmd.Body)
	require.Len(t, recs, 5)
	for _, f := range recs {
		require.Equal(t, "Pub", f[0])
		require.Len(t, f, 14)
		require.Equal(t, "GoldenIProducerGroup", f[3])
		require.Equal(t, "true", f[13])
	}
}
