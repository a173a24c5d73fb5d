package remoting

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The POP frames of a real 5.3.3 broker and client (golden p_pop_533) decode; their codes
// are beyond 16 bits, so they are JSON.
func TestGoldenPopFramesDecode(t *testing.T) {
	frames, data := loadGolden(t, "p_pop_533")
	for _, g := range frames {
		t.Run(g.File, func(t *testing.T) {
			cmd, err := DecodeFrame(data[g.File])
			require.NoError(t, err)
			checkGolden(t, g, cmd)
			require.Equal(t, SerializeJSON, cmd.Serialize)
			out, err := EncodeFrame(nil, cmd)
			require.NoError(t, err)
			again, err := DecodeFrame(out)
			require.NoError(t, err)
			require.Equal(t, cmd, again)
		})
	}
	require.Len(t, frames, 6)
}

// A Java client with ROCKETMQ headers writes POP_MESSAGE's code cut to 16 bits: 3442,
// which the broker refuses (golden p3_pop_rocketmq_533). The frame decodes to what it
// says and re-encodes byte for byte; the ext fields are the normal POP_MESSAGE ones.
func TestGoldenPopCodeCutInRocketMQHeader(t *testing.T) {
	frames, data := loadGolden(t, "p3_pop_rocketmq_533")
	for _, g := range frames {
		cmd, err := DecodeFrame(data[g.File])
		require.NoError(t, err)
		checkGolden(t, g, cmd)
		if cmd.IsResponse() {
			require.Equal(t, int32(3), cmd.Code, "REQUEST_CODE_NOT_SUPPORTED")
			require.Equal(t, " request type 3442 not supported", cmd.Remark)
			require.Equal(t, SerializeJSON, cmd.Serialize, "the broker answers in JSON")
			continue
		}
		require.Equal(t, SerializeRocketMQ, cmd.Serialize)
		require.Equal(t, int32(3442), cmd.Code)
		require.Equal(t, int32(479), cmd.Version)
		require.Equal(t, "GoldenPopBinTopic", cmd.ExtFields.Value("topic"))
		require.Equal(t, "-1", cmd.ExtFields.Value("queueId"))
		out, err := EncodeFrame(nil, cmd)
		require.NoError(t, err)
		require.Equal(t, data[g.File], out)
	}
}

// A client configured for ROCKETMQ headers still sends a code beyond 16 bits in JSON,
// which a broker reads; the ROCKETMQ encoder itself refuses such a code.
func TestCodesBeyond16BitsGoInJSON(t *testing.T) {
	got := make(chan SerializeType, 2)
	s := startServer(t, WithServerHandler(200050, func(_ *ServerConn, req *Command) *Command {
		got <- req.Serialize
		return NewResponse(req, 0, "")
	}))
	defer s.Close()
	c := newClient(t, WithSerialization(SerializeRocketMQ))
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.Invoke(ctx, s.Addr(), NewRequest(200050, Fields{{Key: "topic", Value: "t"}}, nil))
	require.NoError(t, err)
	require.Equal(t, SerializeJSON, <-got)
	_, err = c.Invoke(ctx, s.Addr(), NewRequest(codeEcho, nil, nil))
	require.NoError(t, err)

	_, err = EncodeFrame(nil, &Command{Code: 200050, Serialize: SerializeRocketMQ})
	require.ErrorContains(t, err, "does not fit in int16")
}
