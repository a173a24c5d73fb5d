package message

import (
	"fmt"
	"net/netip"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// pullBody returns a body of n records of bodySize bytes each with typical properties,
// all of one topic and queue, compressed with c when compress is set.
func pullBody(tb testing.TB, n, bodySize int, compress bool, c Compression) []byte {
	tb.Helper()
	var body []byte
	payload := make([]byte, bodySize)
	for i := range payload {
		payload[i] = "abcdefghijklmnopqrstuvwxyz012345"[i%32]
	}
	for i := range n {
		m := &Ext{
			Message: Message{Topic: "OrdersTopic", Body: payload, Properties: PropertiesFromWire(fmt.Sprintf(
				"KEYS\x01order-%d customer-%d\x02UNIQ_KEY\x01C0A80001000018B4AAC2%012X\x02CLUSTER\x01DefaultCluster\x02TAGS\x01created", i, i*7, i))},
			QueueID: 3, QueueOffset: int64(1000 + i), CommitLogOffset: int64(1 << 30 * i),
			BornTimestamp: 1700000000000 + int64(i), BornHost: netip.MustParseAddrPort("192.0.2.7:53312"),
			StoreTimestamp: 1700000000002 + int64(i), StoreHost: netip.MustParseAddrPort("192.0.2.1:10911"),
		}
		if compress {
			stored, err := Compress(payload, c)
			require.NoError(tb, err)
			m.Body = stored
			m.SysFlag = CompressionFlag(c)
		}
		var err error
		body, err = AppendStoreRecord(body, m)
		require.NoError(tb, err)
	}
	return body
}

// TestDecodeAllocations: decoding an uncompressed pull body of 32 records costs three
// allocations (the Ext values, their pointers, one string for every topic and property).
func TestDecodeAllocations(t *testing.T) {
	body := pullBody(t, 32, 1024, false, 0)
	var d Decoder
	for _, tc := range []struct {
		name   string
		decode func() ([]*Ext, error)
	}{
		{"DecodeAll", func() ([]*Ext, error) { return DecodeAll(body) }},
		{"Decoder.DecodeAll", func() ([]*Ext, error) { return d.DecodeAll(body) }},
		{"Decoder.DecodeAllWith", func() ([]*Ext, error) {
			return d.DecodeAllWith(body, Property{PropertyMinOffset, "0"}, Property{PropertyMaxOffset, "1032"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			allocs := testing.AllocsPerRun(50, func() {
				msgs, err := tc.decode()
				if err != nil || len(msgs) != 32 {
					panic(fmt.Sprint("decode failed: ", err))
				}
			})
			require.LessOrEqual(t, allocs, 3.0)
		})
	}
}

// TestDecodeLayout: the messages of one body live in one []Ext, consecutive records
// share their topic string, the strings of all messages are one allocation, and bodies
// slice into the input with their capacity clipped.
func TestDecodeLayout(t *testing.T) {
	body := pullBody(t, 40, 100, false, 0) // more than the 32 spans kept on the stack
	msgs, err := DecodeAll(body)
	require.NoError(t, err)
	require.Len(t, msgs, 40)
	size := unsafe.Sizeof(Ext{})
	base := uintptr(unsafe.Pointer(msgs[0]))
	var strLen int
	for i, m := range msgs {
		require.Equal(t, base+uintptr(i)*size, uintptr(unsafe.Pointer(m)), "message %d in the same []Ext", i)
		require.Equal(t, strAddr(msgs[0].Topic), strAddr(m.Topic), "topic shared")
		require.Equal(t, len(m.Body), cap(m.Body))
		off := uintptr(unsafe.Pointer(unsafe.SliceData(m.Body))) - uintptr(unsafe.Pointer(unsafe.SliceData(body)))
		require.Less(t, off, uintptr(len(body)), "body %d slices into the input", i)
		strLen += len(m.Properties.String())
	}
	// Topic, then every message's properties, back to back in one string.
	first := uintptr(unsafe.Pointer(unsafe.StringData(msgs[0].Topic)))
	last := msgs[len(msgs)-1].Properties.String()
	end := uintptr(unsafe.Pointer(unsafe.StringData(last))) + uintptr(len(last))
	require.Equal(t, uintptr(len(msgs[0].Topic)+strLen), end-first, "one string")

	// Appending to one body does not touch the next record.
	next := string(msgs[1].Body)
	_ = append(msgs[0].Body, "overwrite?"...)
	require.Equal(t, next, string(msgs[1].Body))
}

// TestTopicInterning: a topic is stored once per run of records that carry it.
func TestTopicInterning(t *testing.T) {
	var body []byte
	for _, topic := range []string{"A", "A", "B", "B", "A", "", ""} {
		body = append(body, mustRecord(t, testExt(topic, "x"))...)
	}
	msgs, err := DecodeAll(body)
	require.NoError(t, err)
	require.Len(t, msgs, 7)
	topics := []string{}
	for _, m := range msgs {
		topics = append(topics, m.Topic)
	}
	require.Equal(t, []string{"A", "A", "B", "B", "A", "", ""}, topics)
	require.Equal(t, strAddr(msgs[0].Topic), strAddr(msgs[1].Topic))
	require.Equal(t, strAddr(msgs[2].Topic), strAddr(msgs[3].Topic))
	require.NotEqual(t, strAddr(msgs[0].Topic), strAddr(msgs[4].Topic), "not consecutive: stored again")
}

// strAddr is the address of a string's bytes (require compares pointers by pointee).
func strAddr(s string) uintptr {
	return uintptr(unsafe.Pointer(unsafe.StringData(s)))
}
