package protocol

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
)

func TestOffsetTableBodyRoundTrip(t *testing.T) {
	in := OffsetTableBody{OffsetTable: map[message.Queue]int64{
		{Topic: "t", BrokerName: "broker-a", QueueID: 0}: 7,
		{Topic: "t", BrokerName: "broker-a", QueueID: 1}: 1 << 40,
	}}
	data := in.Encode(StyleFastjson)
	require.Equal(t, `{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"t"}:7,{"brokerName":"broker-a","queueId":1,"topic":"t"}:1099511627776}}`, string(data))
	for _, style := range []Style{StyleFastjson, StyleStandard, StyleBrowserCompatible} {
		var out OffsetTableBody
		require.NoError(t, out.Decode(in.Encode(style)), style)
		require.Equal(t, in, out, style)
	}
	var out OffsetTableBody
	require.Error(t, out.Decode([]byte(`{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"t"}:"x"}}`)))
	require.Error(t, out.Decode([]byte(`{"offsetTable":`)))
}
