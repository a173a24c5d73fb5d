package message

import (
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// genRecord is one store record drawn by rapid: the Ext to encode (body as stored) and
// the messages decoding it must give.
type genRecord struct {
	ext  *Ext
	want []extFields
}

var genCompression = rapid.SampledFrom([]Compression{CompressionZlibDefault, CompressionLZ4, CompressionZstd, CompressionZlib})

func drawRecord(t *rapid.T) genRecord {
	m := &Ext{}
	if rapid.Bool().Draw(t, "longTopic") {
		m.Topic = rapid.StringMatching(`[A-Za-z0-9%_-]{128,300}`).Draw(t, "topic")
	} else {
		m.Topic = rapid.StringMatching(`[A-Za-z0-9%_-]{0,127}`).Draw(t, "topic")
	}
	m.QueueID = rapid.Int32().Draw(t, "queueId")
	m.Flag = rapid.Int32().Draw(t, "flag")
	m.QueueOffset = rapid.Int64().Draw(t, "queueOffset")
	m.CommitLogOffset = rapid.Int64().Draw(t, "commitLogOffset")
	m.SysFlag = rapid.SampledFrom([]int32{0, SysFlagMultiTags, SysFlagTransactionPrepared,
		SysFlagTransactionCommit | SysFlagMultiTags, SysFlagTransactionRollback}).Draw(t, "sysFlag")
	m.BornTimestamp = rapid.Int64().Draw(t, "bornTimestamp")
	m.BornHost = genHost(t, "born")
	m.StoreTimestamp = rapid.Int64().Draw(t, "storeTimestamp")
	m.StoreHost = genHost(t, "store")
	m.ReconsumeTimes = rapid.Int32().Draw(t, "reconsumeTimes")
	m.PreparedTransactionOffset = rapid.Int64().Draw(t, "preparedTransactionOffset")
	m.Properties = genProperties(t)

	flags := m.SysFlag
	if !m.BornHost.Addr().Is4() {
		flags |= SysFlagBornHostV6
	}
	if !m.StoreHost.Addr().Is4() {
		flags |= SysFlagStoreHostV6
	}
	var want []extFields
	if rapid.Bool().Draw(t, "innerBatch") {
		if rapid.Bool().Draw(t, "wait") {
			m.Properties.Set(PropertyWaitStoreMsgOK, rapid.SampledFrom([]string{"true", "false", "TRUE", "no"}).Draw(t, "waitValue"))
		}
		wait := "true"
		if v, ok := m.Properties.Get(PropertyWaitStoreMsgOK); ok && !strings.EqualFold(v, "true") {
			wait = "false"
		}
		inner := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) *Message {
			return &Message{
				Flag:       rapid.Int32().Draw(t, "innerFlag"),
				Body:       rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "innerBody"),
				Properties: genProperties(t),
			}
		}), 0, 6).Draw(t, "inner")
		batch, err := EncodeBatch(inner)
		require.NoError(t, err)
		m.Body = batch
		m.SysFlag |= SysFlagInnerBatch | SysFlagNeedUnwrap
		flags |= SysFlagInnerBatch | SysFlagNeedUnwrap
		for j, im := range inner {
			props := im.Properties.Map()
			props[PropertyWaitStoreMsgOK] = wait
			want = append(want, extFields{
				Topic: m.Topic, Flag: im.Flag, Body: nilIfEmpty(im.Body), Properties: props,
				QueueID: m.QueueID, QueueOffset: m.QueueOffset + int64(j), SysFlag: flags,
				BornTimestamp: m.BornTimestamp, BornHost: m.BornHost, StoreTimestamp: m.StoreTimestamp,
				StoreHost: m.StoreHost, CommitLogOffset: m.CommitLogOffset,
			})
		}
	} else {
		m.Body = rapid.SliceOfN(rapid.Byte(), 0, 2000).Draw(t, "body")
		want = append(want, extFields{
			Topic: m.Topic, Flag: m.Flag, Body: nilIfEmpty(m.Body), Properties: m.Properties.Map(),
			QueueID: m.QueueID, QueueOffset: m.QueueOffset, SysFlag: flags,
			BornTimestamp: m.BornTimestamp, BornHost: m.BornHost, StoreTimestamp: m.StoreTimestamp,
			StoreHost: m.StoreHost, CommitLogOffset: m.CommitLogOffset, ReconsumeTimes: m.ReconsumeTimes,
			PreparedTransactionOffset: m.PreparedTransactionOffset,
		})
	}
	if rapid.Bool().Draw(t, "compressed") {
		c := genCompression.Draw(t, "codec")
		stored, err := Compress(m.Body, c)
		require.NoError(t, err)
		m.Body = stored
		m.SysFlag |= CompressionFlag(c)
		for i := range want {
			want[i].SysFlag |= CompressionFlag(c) &^ SysFlagCompressed // codec bits stay
		}
	}
	return genRecord{ext: m, want: want}
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// TestRoundTrip encodes random records (IPv4 and IPv6 hosts, v1 and v2 topics, every
// codec, inner batches) back to back and decodes them.
func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		recs := rapid.SliceOfN(rapid.Custom(drawRecord), 0, 8).Draw(t, "records")
		var body []byte
		var want []extFields
		for _, r := range recs {
			start := len(body)
			var err error
			body, err = AppendStoreRecord(body, r.ext)
			require.NoError(t, err)
			size := int32(len(body) - start)
			for _, w := range r.want {
				if r.ext.SysFlag&SysFlagInnerBatch == 0 {
					w.StoreSize = size
					w.BodyCRC = BodyCRC(r.ext.Body)
				}
				want = append(want, w)
			}
		}
		var d Decoder
		msgs, err := d.DecodeAll(body)
		require.NoError(t, err)
		require.Len(t, msgs, len(want))
		for i, m := range msgs {
			require.Equal(t, want[i], fieldsOf(m), "message %d", i)
			require.Equal(t, len(m.Body), cap(m.Body), "body capacity clipped")
		}

		extra := []Property{{PropertyMinOffset, "0"}, {PropertyMaxOffset, "42"}}
		msgs, err = d.DecodeAllWith(body, extra...)
		require.NoError(t, err)
		require.Len(t, msgs, len(want))
		for i, m := range msgs {
			w := maps.Clone(want[i].Properties)
			w[PropertyMinOffset], w[PropertyMaxOffset] = "0", "42"
			require.Equal(t, w, m.Properties.Map(), "message %d", i)
		}
	})
}
