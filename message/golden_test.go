package message

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGoldenRecords decodes every store-record body kept from the real 4.9.8 broker and
// checks every field its index.json records, then re-encodes each record and compares
// the bytes.
func TestGoldenRecords(t *testing.T) {
	records, _ := loadGolden(t)
	require.GreaterOrEqual(t, len(records), 14)
	seen := map[string]bool{}
	for _, c := range records {
		t.Run(c.name, func(t *testing.T) {
			msgs, err := DecodeAll(c.body)
			require.NoError(t, err)
			require.Len(t, msgs, len(c.frame.Messages))
			for i, g := range c.frame.Messages {
				m := msgs[i]
				checkGoldenMessage(t, &g, m)
				if g.SysFlag&SysFlagCompressed != 0 {
					seen["compressed"] = true
				}
				if g.BodyLength == 0 {
					seen["empty"] = true
				}
				if g.ReconsumeTimes > 0 {
					seen["retried"] = true
				}

				// Re-encode: the record as stored, so a decompressed body goes back to the
				// stored bytes and flag.
				raw := c.body[g.RecordOffsetInBody : g.RecordOffsetInBody+int(g.StoreSize)]
				again := *m
				if g.SysFlag&SysFlagCompressed != 0 {
					again.Body = g.BodyStoredBase64
					again.SysFlag = g.SysFlag
				}
				enc, err := AppendStoreRecord(nil, &again)
				require.NoError(t, err)
				require.Equal(t, raw, enc, "re-encoded record %d", i)
			}
		})
	}
	require.Equal(t, map[string]bool{"compressed": true, "empty": true, "retried": true}, seen,
		"the golden set must include a compressed, an empty and a retried message")
}

func checkGoldenMessage(t *testing.T, g *goldenMessage, m *Ext) {
	t.Helper()
	require.Equal(t, MagicV1, g.MagicCode)
	require.Equal(t, g.Topic, m.Topic, "topic")
	require.Equal(t, g.QueueID, m.QueueID, "queueId")
	require.Equal(t, g.QueueOffset, m.QueueOffset, "queueOffset")
	require.Equal(t, g.CommitLogOffset, m.CommitLogOffset, "commitLogOffset")
	require.Equal(t, g.SysFlag&^SysFlagCompressed, m.SysFlag, "sysFlag, COMPRESSED cleared")
	require.Equal(t, g.Flag, m.Flag, "flag")
	require.Equal(t, g.BornTimestamp, m.BornTimestamp, "bornTimestamp")
	require.Equal(t, netip.MustParseAddrPort(g.BornHost), m.BornHost, "bornHost")
	require.Equal(t, g.StoreTimestamp, m.StoreTimestamp, "storeTimestamp")
	require.Equal(t, netip.MustParseAddrPort(g.StoreHost), m.StoreHost, "storeHost")
	require.Equal(t, g.ReconsumeTimes, m.ReconsumeTimes, "reconsumeTimes")
	require.Equal(t, g.PreparedTransactionOffset, m.PreparedTransactionOffset, "preparedTransactionOffset")
	require.Equal(t, g.BodyCRC, m.BodyCRC, "bodyCRC")
	require.Equal(t, g.StoreSize, m.StoreSize, "storeSize")
	require.Len(t, m.Body, g.BodyLength, "body length")
	require.Equal(t, string(g.decodedBody(t)), string(m.Body), "body")
	if g.SysFlag&SysFlagCompressed != 0 {
		require.Len(t, g.BodyStoredBase64, g.BodyLengthOnWire)
		require.Equal(t, g.BodyCRC, BodyCRC(g.BodyStoredBase64), "bodyCRC covers the stored bytes")
	} else {
		require.Equal(t, g.BodyCRC, BodyCRC(m.Body), "bodyCRC")
	}

	// Properties: all of them, by Range, Map, Get and the wire form.
	require.Equal(t, g.PropertiesRaw, m.Properties.String(), "properties wire form")
	require.Len(t, g.PropertiesRaw, g.PropertiesLength)
	require.Equal(t, g.Properties, m.Properties.Map(), "properties")
	var order []string
	m.Properties.Range(func(name, value string) bool {
		order = append(order, name)
		require.Equal(t, g.Properties[name], value, name)
		return true
	})
	require.Equal(t, g.PropertyOrder, order, "property order")
	require.Equal(t, len(g.Properties), m.Properties.Len())
	for name, want := range g.Properties {
		got, ok := m.Properties.Get(name)
		require.True(t, ok, name)
		require.Equal(t, want, got, name)
	}
	_, ok := m.Properties.Get("NO_SUCH_PROPERTY")
	require.False(t, ok)
	require.Equal(t, g.Properties[PropertyTags], m.Tags())

	require.Equal(t, g.MsgID, m.MsgID(), "msgId")
	require.Equal(t, g.OffsetMsgID, m.OffsetMsgID(), "offsetMsgId")
}

// TestGoldenBatch decodes the SEND_BATCH_MESSAGE body of a_produce and re-encodes it.
func TestGoldenBatch(t *testing.T) {
	_, batches := loadGolden(t)
	require.Len(t, batches, 1)
	c := batches[0]
	msgs, err := DecodeBatch(c.body)
	require.NoError(t, err)
	require.Len(t, msgs, len(c.frame.Batch))
	fresh := make([]*Message, len(msgs))
	for i, g := range c.frame.Batch {
		m := msgs[i]
		require.Equal(t, "", m.Topic)
		require.Equal(t, g.Flag, m.Flag)
		require.Equal(t, string(goldenBytes(t, g.BodyEncoding, g.Body)), string(m.Body))
		require.Len(t, m.Body, g.BodyLength)
		require.Equal(t, g.PropertiesRaw, m.Properties.String())
		require.Equal(t, g.Properties, m.Properties.Map())
		require.Equal(t, len(m.Body), cap(m.Body), "body capacity clipped")

		// The same message built from scratch, properties in wire order.
		var props Properties
		m.Properties.Range(func(n, v string) bool { props.Set(n, v); return true })
		fresh[i] = &Message{Flag: g.Flag, Body: []byte(string(m.Body)), Properties: props}
	}
	again, err := EncodeBatch(msgs)
	require.NoError(t, err)
	require.Equal(t, c.body, again, "decoded messages re-encode to the captured bytes")
	built, err := EncodeBatch(fresh)
	require.NoError(t, err)
	require.Equal(t, c.body, built, "messages built from scratch encode to the captured bytes")
}
