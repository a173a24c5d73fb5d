package message

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAppendStoreRecordLayout(t *testing.T) {
	for _, tc := range []struct {
		name            string
		topic           string
		born, store     string
		wantMagic       int32
		wantFlags       int32
		wantTopicLenLen int
	}{
		{"IPv4, v1", "T", "1.2.3.4:5", "6.7.8.9:10911", MagicV1, 0, 1},
		{"IPv6 born", "T", "[2001:db8::1]:5", "6.7.8.9:10911", MagicV1, SysFlagBornHostV6, 1},
		{"IPv6 store", "T", "1.2.3.4:5", "[::1]:10911", MagicV1, SysFlagStoreHostV6, 1},
		{"IPv6 both", "T", "[2001:db8::1]:5", "[2001:db8::2]:10911", MagicV1, SysFlagBornHostV6 | SysFlagStoreHostV6, 1},
		{"v4-mapped IPv6 stays 16 bytes", "T", "[::ffff:1.2.3.4]:5", "6.7.8.9:10911", MagicV1, SysFlagBornHostV6, 1},
		{"127-byte topic, v1", strings.Repeat("t", 127), "1.2.3.4:5", "6.7.8.9:10911", MagicV1, 0, 1},
		{"128-byte topic, v2", strings.Repeat("t", 128), "1.2.3.4:5", "6.7.8.9:10911", MagicV2, 0, 2},
		{"longest topic, v2", strings.Repeat("t", MaxTopicLength), "1.2.3.4:5", "6.7.8.9:10911", MagicV2, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testExt(tc.topic, "body")
			m.BornHost = netip.MustParseAddrPort(tc.born)
			m.StoreHost = netip.MustParseAddrPort(tc.store)
			m.SysFlag = SysFlagBornHostV6 | SysFlagStoreHostV6 | SysFlagMultiTags // v6 bits come from the hosts
			m.StoreSize, m.BodyCRC = 12345, 678                                   // ignored
			prefix := []byte("prefix")
			rec, err := AppendStoreRecord(prefix, m)
			require.NoError(t, err)
			require.Equal(t, "prefix", string(rec[:6]))
			rec = rec[6:]
			require.Equal(t, len(rec), int(binary.BigEndian.Uint32(rec)), "storeSize")
			require.Equal(t, tc.wantMagic, int32(binary.BigEndian.Uint32(rec[4:])))
			require.Equal(t, BodyCRC([]byte("body")), int32(binary.BigEndian.Uint32(rec[8:])))
			require.Equal(t, tc.wantFlags|SysFlagMultiTags, int32(binary.BigEndian.Uint32(rec[36:])))
			hostLen := 0
			if tc.wantFlags&SysFlagBornHostV6 != 0 {
				hostLen += 12
			}
			if tc.wantFlags&SysFlagStoreHostV6 != 0 {
				hostLen += 12
			}
			wantSize := minRecordSize + hostLen + 4 + tc.wantTopicLenLen - 1 + len(tc.topic) + len("TAGS\x01TagA\x02KEYS\x01k1 k2\x02")
			require.Len(t, rec, wantSize)

			msgs, err := DecodeAll(rec)
			require.NoError(t, err)
			require.Len(t, msgs, 1)
			got := msgs[0]
			require.Equal(t, tc.topic, got.Topic)
			require.Equal(t, m.BornHost, got.BornHost)
			require.Equal(t, m.StoreHost, got.StoreHost)
			require.Equal(t, int32(wantSize), got.StoreSize)
			require.Equal(t, "body", string(got.Body))
		})
	}
}

func TestAppendStoreRecordInvalidHost(t *testing.T) {
	m := testExt("T", "b")
	m.BornHost = netip.AddrPort{}
	msgs, err := DecodeAll(mustRecord(t, m))
	require.NoError(t, err)
	require.Equal(t, netip.MustParseAddrPort("0.0.0.0:0"), msgs[0].BornHost)
}

func TestEncoderRejects(t *testing.T) {
	tooLong := strings.Repeat("v", MaxPropertiesLength)
	for _, tc := range []struct {
		name   string
		change func(*Ext)
		msg    string
	}{
		{"topic too long", func(m *Ext) { m.Topic = strings.Repeat("t", MaxTopicLength+1) }, "topic of 32768 bytes exceeds the 32767-byte maximum"},
		{"properties too long", func(m *Ext) { m.Properties.Set("k", tooLong) }, "properties of 32791 bytes exceed the 32767-byte maximum"},
		{"wire properties too long", func(m *Ext) { m.Properties = PropertiesFromWire("k\x01" + tooLong) }, "exceed the 32767-byte maximum"},
		{"0x01 in a value", func(m *Ext) { m.Properties.Set("k", "a\x01b") }, `property "k": value "a\x01b" contains a separator byte`},
		{"0x02 in a value", func(m *Ext) { m.Properties.Set("k", "a\x02b") }, "contains a separator byte"},
		{"0x01 in a name", func(m *Ext) { m.Properties.Set("k\x01", "v") }, `property name "k\x01" contains a separator byte`},
		{"0x02 in a name", func(m *Ext) { m.Properties.Set("\x02k", "v") }, "contains a separator byte"},
		{"empty name", func(m *Ext) { m.Properties.Set("", "v") }, `property with value "v" has an empty name`},
		{"empty value", func(m *Ext) { m.Properties.Set("k", "") }, `property "k" has an empty value`},
		{"unknown codec", func(m *Ext) { m.SysFlag = SysFlagCompressed | 6<<8 }, "compressed with unknown codec 6"},
		{"inner batch flags on a plain body", func(m *Ext) { m.SysFlag = SysFlagInnerBatch | SysFlagNeedUnwrap },
			"sysFlag marks an inner batch but the body is not one: entry at byte 0: totalSize needs 4 bytes, 3 left"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testExt("T", "abc")
			tc.change(m)
			dst := []byte("keep")
			out, err := AppendStoreRecord(dst, m)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.msg)
			require.True(t, strings.HasPrefix(err.Error(), "message: "), err.Error())
			require.Equal(t, "keep", string(out), "nothing written")

			_, err = EncodeBatch([]*Message{{Body: []byte("ok")}, &m.Message})
			if strings.Contains(tc.name, "propert") || strings.Contains(tc.name, "0x0") || strings.Contains(tc.name, "empty") {
				require.ErrorContains(t, err, "batch message 1: ")
				require.ErrorContains(t, err, tc.msg)
			}
		})
	}
	// A wire form read from the network is written back as it is, separators and all.
	m := testExt("T", "abc")
	m.Properties = PropertiesFromWire("a\x01b\x01c\x02\x02")
	rec, err := AppendStoreRecord(nil, m)
	require.NoError(t, err)
	msgs, err := DecodeAll(rec)
	require.NoError(t, err)
	require.Equal(t, "a\x01b\x01c\x02\x02", msgs[0].Properties.String())
	// An empty compressed body with an unknown codec is what a decoder accepts, so the
	// encoder accepts it too.
	m.Body, m.SysFlag = nil, SysFlagCompressed|6<<8
	_, err = AppendStoreRecord(nil, m)
	require.NoError(t, err)
}

func TestDecodeAllWithRejects(t *testing.T) {
	var d Decoder
	_, err := d.DecodeAllWith(mustRecord(t, testExt("T", "x")), Property{"MIN_OFFSET", "1\x022"})
	require.ErrorContains(t, err, "contains a separator byte")
	msgs, err := d.DecodeAllWith(nil, Property{"A", "1"})
	require.NoError(t, err)
	require.Empty(t, msgs)
}

func TestDecodeAllWithOverrides(t *testing.T) {
	for _, raw := range []string{"", "TAGS\x01t", "TAGS\x01t\x02", "MIN_OFFSET\x01old\x02TAGS\x01t"} {
		m := testExt("T", "x")
		m.Properties = PropertiesFromWire(raw)
		var d Decoder
		msgs, err := d.DecodeAllWith(mustRecord(t, m), Property{PropertyMinOffset, "5"}, Property{PropertyMaxOffset, "9"})
		require.NoError(t, err)
		p := &msgs[0].Properties
		require.Equal(t, "5", p.Value(PropertyMinOffset), raw)
		require.Equal(t, "9", p.Value(PropertyMaxOffset), raw)
		require.True(t, strings.HasPrefix(p.String(), raw), "the record's wire form comes first")
		require.NotContains(t, p.String(), "\x02\x02")
	}
}

// TestInnerBatchUnwrap builds an inner-batch record with the encoders and checks the
// Java 5 unwrapping rule field by field.
func TestInnerBatchUnwrap(t *testing.T) {
	inner := []*Message{
		{Flag: 11, Body: []byte("first"), Properties: PropertiesOf(Property{PropertyUniqKey, "UNIQ1"}, Property{PropertyTags, "A"})},
		{Flag: 12, Body: nil, Properties: PropertiesOf(Property{PropertyWaitStoreMsgOK, "true"})},
		{Flag: 13, Body: []byte("third")},
	}
	batch, err := EncodeBatch(inner)
	require.NoError(t, err)
	for _, compressed := range []bool{false, true} {
		outer := testExt("BatchTopic", "")
		outer.Body = batch
		outer.SysFlag = SysFlagInnerBatch | SysFlagNeedUnwrap | SysFlagMultiTags
		outer.ReconsumeTimes, outer.PreparedTransactionOffset = 3, 99
		outer.Properties = PropertiesOf(Property{PropertyWaitStoreMsgOK, "false"}, Property{PropertyInnerNum, "3"},
			Property{PropertyUniqKey, "OUTER"})
		if compressed {
			outer.Body = mustCompress(t, CompressionZstd, string(batch))
			outer.SysFlag |= CompressionFlag(CompressionZstd)
		}
		body := append(mustRecord(t, testExt("BatchTopic", "before")), mustRecord(t, outer)...)
		body = append(body, mustRecord(t, testExt("BatchTopic", "after"))...)
		msgs, err := DecodeAll(body)
		require.NoError(t, err)
		require.Len(t, msgs, 5)
		require.Equal(t, "before", string(msgs[0].Body))
		require.Equal(t, "after", string(msgs[4].Body))
		for j, m := range msgs[1:4] {
			require.Equal(t, "BatchTopic", m.Topic)
			require.Equal(t, outer.QueueID, m.QueueID)
			require.Equal(t, outer.QueueOffset+int64(j), m.QueueOffset, "queueOffset = record's + index")
			require.Equal(t, outer.CommitLogOffset, m.CommitLogOffset, "commitLogOffset = record's")
			require.Equal(t, outer.SysFlag&^SysFlagCompressed, m.SysFlag, "sysFlag = record's, batch bits kept")
			require.Equal(t, outer.BornTimestamp, m.BornTimestamp)
			require.Equal(t, outer.BornHost, m.BornHost)
			require.Equal(t, outer.StoreTimestamp, m.StoreTimestamp)
			require.Equal(t, outer.StoreHost, m.StoreHost)
			require.Equal(t, inner[j].Flag, m.Flag)
			require.Equal(t, string(inner[j].Body), string(m.Body))
			require.Zero(t, m.StoreSize)
			require.Zero(t, m.BodyCRC)
			require.Zero(t, m.ReconsumeTimes)
			require.Zero(t, m.PreparedTransactionOffset)
			require.Equal(t, "false", m.Properties.Value(PropertyWaitStoreMsgOK), "WAIT from the record")
			_, ok := m.Properties.Get(PropertyInnerNum)
			require.False(t, ok, "no other property of the record is inherited")
			require.Equal(t, msgs[0].OffsetMsgID()[:16], m.OffsetMsgID()[:16])
			require.Equal(t, OffsetMsgID(outer.StoreHost, outer.CommitLogOffset), m.OffsetMsgID())
		}
		require.Equal(t, "UNIQ1", msgs[1].MsgID())
		require.Equal(t, "A", msgs[1].Tags())
		require.Equal(t, msgs[2].OffsetMsgID(), msgs[2].MsgID(), "no UNIQ_KEY: the record's offsetMsgId")
		require.Nil(t, msgs[2].Body)
		require.Equal(t, map[string]string{PropertyWaitStoreMsgOK: "false"}, msgs[2].Properties.Map())
		require.Equal(t, map[string]string{PropertyWaitStoreMsgOK: "false"}, msgs[3].Properties.Map())
	}

	// WAIT defaults to true, and anything but "true" (any case) is false.
	for _, tc := range []struct{ raw, want string }{{"", "true"}, {"WAIT\x01TRUE", "true"}, {"WAIT\x01yes", "false"}} {
		outer := testExt("T", "")
		outer.Body = batch
		outer.SysFlag = SysFlagInnerBatch | SysFlagNeedUnwrap
		outer.Properties = PropertiesFromWire(tc.raw)
		msgs, err := DecodeAll(mustRecord(t, outer))
		require.NoError(t, err)
		for _, m := range msgs {
			require.Equal(t, tc.want, m.Properties.Value(PropertyWaitStoreMsgOK), tc.raw)
		}
	}

	// INNER_BATCH without NEED_UNWRAP is an ordinary record.
	outer := testExt("T", "")
	outer.Body = batch
	outer.SysFlag = SysFlagInnerBatch
	msgs, err := DecodeAll(mustRecord(t, outer))
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.Equal(t, batch, msgs[0].Body)

	// An empty inner batch gives no message.
	outer.Body, outer.SysFlag = nil, SysFlagInnerBatch|SysFlagNeedUnwrap
	msgs, err = DecodeAll(append(mustRecord(t, outer), mustRecord(t, testExt("T", "x"))...))
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.Equal(t, "x", string(msgs[0].Body))
}

func TestErrorsAs(t *testing.T) {
	_, err := DecodeAll([]byte{0, 0, 0})
	var de *DecodeError
	require.True(t, errors.As(err, &de))
	require.Equal(t, "message: record at byte 0: storeSize needs 4 bytes, 3 left", err.Error())
	require.Equal(t, "storeSize", de.Field)
	require.NotNil(t, errors.Unwrap(err))
}
