package message

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
)

// testExt returns a small valid message.
func testExt(topic, body string) *Ext {
	return &Ext{
		Message: Message{Topic: topic, Body: []byte(body),
			Properties: PropertiesOf(Property{PropertyTags, "TagA"}, Property{PropertyKeys, "k1 k2"})},
		QueueID: 1, QueueOffset: 7, CommitLogOffset: 1000,
		BornTimestamp: 1700000000000, BornHost: netip.MustParseAddrPort("10.0.0.1:50000"),
		StoreTimestamp: 1700000000001, StoreHost: netip.MustParseAddrPort("10.0.0.2:10911"),
	}
}

func mustRecord(t testing.TB, m *Ext) []byte {
	t.Helper()
	b, err := AppendStoreRecord(nil, m)
	require.NoError(t, err)
	return b
}

func requireDecodeError(t *testing.T, err error, offset int, field string) *DecodeError {
	t.Helper()
	var de *DecodeError
	require.True(t, errors.As(err, &de), "want a *DecodeError, got %v", err)
	require.Equal(t, offset, de.Offset, "offset: %v", err)
	require.Equal(t, field, de.Field, "field: %v", err)
	require.True(t, strings.HasPrefix(err.Error(), "message: record at byte "), err.Error())
	return de
}

// TestTruncatedAtEveryByte cuts a valid 3-record body at every byte.
func TestTruncatedAtEveryByte(t *testing.T) {
	var body []byte
	starts := []int{0}
	for i, s := range []string{"first", "second body", "third"} {
		body = append(body, mustRecord(t, testExt("TopicT", s))...)
		if i < 2 {
			starts = append(starts, len(body))
		}
	}
	for cut := 0; cut <= len(body); cut++ {
		msgs, err := DecodeAll(body[:cut])
		rec := 0 // the record the cut falls in
		for rec+1 < len(starts) && cut >= starts[rec+1] {
			rec++
		}
		if cut == len(body) || cut == starts[rec] {
			require.NoError(t, err, "cut at %d", cut)
			if cut == len(body) {
				rec = 3
			}
			require.Len(t, msgs, rec, "cut at %d", cut)
			continue
		}
		requireDecodeError(t, err, starts[rec], "storeSize")
		require.Len(t, msgs, rec, "cut at %d: the records before the cut", cut)
		for i, m := range msgs {
			require.Equal(t, []string{"first", "second body"}[i], string(m.Body))
		}
	}
}

// TestCorruptRecords changes one field of the second of two records.
func TestCorruptRecords(t *testing.T) {
	first := mustRecord(t, testExt("T1", "one"))
	second := mustRecord(t, testExt("T2", "two"))
	off := len(first)
	// Offsets of fields in a record with IPv4 hosts.
	const (
		magicAt     = 4
		sysFlagAt   = 36
		bornPortAt  = 52
		storePortAt = 68
		bodyLenAt   = 84
	)
	topicLenAt := bodyLenAt + 4 + 3
	propsLenAt := topicLenAt + 1 + 2
	put32 := func(at int, v uint32) func([]byte) []byte {
		return func(b []byte) []byte { binary.BigEndian.PutUint32(b[at:], v); return b }
	}
	put16 := func(at int, v uint16) func([]byte) []byte {
		return func(b []byte) []byte { binary.BigEndian.PutUint16(b[at:], v); return b }
	}
	for _, tc := range []struct {
		name   string
		change func([]byte) []byte
		field  string
		msg    string
	}{
		{"negative storeSize", put32(0, 0xFFFFFFFF), "storeSize", "storeSize -1 is below the 91-byte minimum"},
		{"tiny storeSize", put32(0, 20), "storeSize", "storeSize 20 is below the 91-byte minimum"},
		{"huge storeSize", put32(0, 0x7FFFFFFF), "storeSize", "storeSize 2147483647 exceeds the"},
		{"storeSize past the fields", func(b []byte) []byte {
			b = append(b, 0, 0)
			binary.BigEndian.PutUint32(b, uint32(len(b)))
			return b
		}, "storeSize", "but the fields end at byte"},
		{"storeSize before the fields end", func(b []byte) []byte {
			binary.BigEndian.PutUint32(b, uint32(len(b)-1))
			return b
		}, "properties length", "exceeds the"},
		{"bad magic", put32(magicAt, 0xCBD43194), "magic", "magic code 0xCBD43194 is neither"},
		{"zero magic", put32(magicAt, 0), "magic", "magic code 0x00000000"},
		{"negative body length", put32(bodyLenAt, 0xFFFFFFF6), "body length", "body length -10 is negative"},
		{"huge body length", put32(bodyLenAt, 9999), "body length", "body length 9999 exceeds the"},
		{"negative v1 topic length", func(b []byte) []byte { b[topicLenAt] = 0x80; return b }, "topic length", "topic length -128 is negative"},
		{"long topic length", func(b []byte) []byte { b[topicLenAt] = 100; return b }, "topic length", "topic length 100 exceeds the"},
		{"negative properties length", put16(propsLenAt, 0x8000), "properties length", "properties length -32768 is negative"},
		{"long properties length", put16(propsLenAt, 0x7FFF), "properties length", "properties length 32767 exceeds the"},
		{"born port out of range", put32(bornPortAt, 70000), "bornHost", "bornHost port 70000 is out of range"},
		{"store port negative", put32(storePortAt, 0xFFFFFFFF), "storeHost", "storeHost port -1 is out of range"},
		{"IPv6 flag on IPv4 hosts", put32(sysFlagAt, uint32(SysFlagBornHostV6|SysFlagStoreHostV6)), "bornHost", "bornHost port 167772162 is out of range"},
		{"unknown codec", put32(sysFlagAt, uint32(SysFlagCompressed|5<<8)), "body", "unknown compression type 5"},
		{"inner batch flags on a plain body", put32(sysFlagAt, uint32(SysFlagInnerBatch|SysFlagNeedUnwrap)), "inner batch", "inner message at byte 0 of the record's body: totalSize needs 4 bytes, 3 left"},
		{"trailing garbage", func(b []byte) []byte { return b[:10] }, "storeSize", "storeSize 117 exceeds the 10 bytes left"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.change(bytes.Clone(second))
			body := append(bytes.Clone(first), bad...)
			msgs, err := DecodeAll(body)
			requireDecodeError(t, err, off, tc.field)
			require.Contains(t, err.Error(), tc.msg)
			require.Contains(t, err.Error(), fmt.Sprintf("message: record at byte %d: ", off))
			require.Len(t, msgs, 1)
			require.Equal(t, "one", string(msgs[0].Body))
		})
	}
}

// TestBadCompressedBodies stores garbage as the body of a compressed record of each codec.
func TestBadCompressedBodies(t *testing.T) {
	good, err := Compress([]byte(strings.Repeat("payload ", 100)), CompressionZstd)
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		codec Compression
		body  []byte
	}{
		{"zlib garbage", CompressionZlib, []byte("definitely not zlib")},
		{"zlib default garbage", CompressionZlibDefault, []byte{0x78, 0x9c, 0xff, 0xff, 0xff}},
		{"zlib truncated", CompressionZlib, mustCompress(t, CompressionZlib, "hello hello hello")[:8]},
		{"zlib bad checksum", CompressionZlib, flipLast(mustCompress(t, CompressionZlib, "hello hello hello"))},
		{"lz4 garbage", CompressionLZ4, []byte("definitely not lz4")},
		{"lz4 truncated", CompressionLZ4, mustCompress(t, CompressionLZ4, strings.Repeat("hello ", 50))[:12]},
		{"zstd garbage", CompressionZstd, []byte("definitely not zstd")},
		{"zstd truncated", CompressionZstd, good[:len(good)/2]},
		{"zstd as lz4", CompressionLZ4, good},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testExt("T", "")
			m.Body = tc.body
			m.SysFlag = CompressionFlag(tc.codec)
			body := append(mustRecord(t, testExt("T", "ok")), mustRecord(t, m)...)
			var d Decoder
			msgs, err := d.DecodeAll(body)
			de := requireDecodeError(t, err, len(body)-len(mustRecord(t, m)), "body")
			require.False(t, errors.Is(err, ErrSizeLimit))
			require.Contains(t, de.Error(), tc.codec.String()+" body does not decompress")
			require.Len(t, msgs, 1, "the record before the bad one")
		})
	}
}

func mustCompress(t testing.TB, c Compression, s string) []byte {
	t.Helper()
	b, err := Compress([]byte(s), c)
	require.NoError(t, err)
	return b
}

func flipLast(b []byte) []byte {
	b = bytes.Clone(b)
	b[len(b)-1] ^= 0xFF
	return b
}

// TestZipBomb decompresses 16 MiB bodies with a 1 MiB limit: each must fail with
// ErrSizeLimit, allocating little more than the limit.
func TestZipBomb(t *testing.T) {
	zeros := make([]byte, 16<<20)
	compress := func(c Compression) func(*testing.T) []byte {
		return func(t *testing.T) []byte { return mustCompress(t, c, string(zeros)) }
	}
	for _, tc := range []struct {
		name  string
		codec Compression
		bomb  func(*testing.T) []byte
	}{
		{"zlib", CompressionZlib, compress(CompressionZlib)},
		{"lz4", CompressionLZ4, compress(CompressionLZ4)},
		{"zstd with content size", CompressionZstd, compress(CompressionZstd)},
		{"zstd streamed, no content size, small window", CompressionZstd, func(t *testing.T) []byte {
			var buf bytes.Buffer
			w, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(512<<10))
			require.NoError(t, err)
			_, err = w.Write(zeros)
			require.NoError(t, err)
			require.NoError(t, w.Close())
			return buf.Bytes()
		}},
		{"zstd frames each under the limit", CompressionZstd, func(t *testing.T) []byte {
			frame := mustCompress(t, CompressionZstd, string(zeros[:512<<10]))
			return bytes.Repeat(frame, 8)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bomb := tc.bomb(t)
			require.Less(t, len(bomb), 1<<20)
			m := testExt("T", "")
			m.Body = bomb
			m.SysFlag = CompressionFlag(tc.codec)
			body := mustRecord(t, m)
			d := Decoder{MaxDecodedSize: 1 << 20}
			_, _ = d.DecodeAll(body) // warm up: pools, the zstd decoder
			// The least of three calls: a GC may empty the decoders' pools between two
			// calls (CI failed once on it, under -race), and that call then pays for
			// a fresh reader and its 4 MiB LZ4 block on top of the bomb's own cost.
			allocated := uint64(math.MaxUint64)
			for range 3 {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				msgs, err := d.DecodeAll(body)
				runtime.ReadMemStats(&after)
				require.Empty(t, msgs)
				requireDecodeError(t, err, 0, "body")
				require.ErrorIs(t, err, ErrSizeLimit)
				require.Contains(t, err.Error(), "decompresses to more than the 1048576 bytes")
				allocated = min(allocated, after.TotalAlloc-before.TotalAlloc)
			}
			t.Logf("%s bomb: %d bytes allocated", tc.name, allocated)
			// The limit, the doubling of the output buffer, and up to one 4 MiB LZ4 block.
			require.Less(t, allocated, uint64(8<<20), "bytes allocated by a rejected bomb")
		})
	}
}

// TestSizeLimitAcrossRecords: the limit bounds the sum of a body's decompressed bodies.
func TestSizeLimitAcrossRecords(t *testing.T) {
	payload := strings.Repeat("x", 600<<10)
	m := testExt("T", "")
	m.Body = mustCompress(t, CompressionZlib, payload)
	m.SysFlag = CompressionFlag(CompressionZlib)
	rec := mustRecord(t, m)
	body := append(append(bytes.Clone(rec), rec...), rec...)
	d := Decoder{MaxDecodedSize: 1 << 20}
	msgs, err := d.DecodeAll(body)
	require.Len(t, msgs, 1)
	requireDecodeError(t, err, len(rec), "body")
	require.ErrorIs(t, err, ErrSizeLimit)

	d = Decoder{MaxDecodedSize: 2 << 20}
	msgs, err = d.DecodeAll(body)
	require.NoError(t, err)
	require.Len(t, msgs, 3)
	for _, m := range msgs {
		require.Equal(t, payload, string(m.Body))
	}
}

// TestInnerBatchLimit: unwrapped messages count against the limit too.
func TestInnerBatchLimit(t *testing.T) {
	inner := make([]*Message, 100)
	for i := range inner {
		inner[i] = &Message{}
	}
	batch, err := EncodeBatch(inner)
	require.NoError(t, err)
	m := testExt("T", "")
	m.Body = batch
	m.SysFlag = SysFlagInnerBatch | SysFlagNeedUnwrap
	body := mustRecord(t, m)
	d := Decoder{MaxDecodedSize: 50 * innerMessageCost}
	_, err = d.DecodeAll(body)
	requireDecodeError(t, err, 0, "inner batch")
	require.ErrorIs(t, err, ErrSizeLimit)
	d = Decoder{MaxDecodedSize: 100 * innerMessageCost}
	msgs, err := d.DecodeAll(body)
	require.NoError(t, err)
	require.Len(t, msgs, 100)
}

// TestBadInnerBatch corrupts the entries of an inner batch.
func TestBadInnerBatch(t *testing.T) {
	batch, err := EncodeBatch([]*Message{{Body: []byte("a")}, {Body: []byte("b")}})
	require.NoError(t, err)
	binary.BigEndian.PutUint32(batch[23+16:], 1000) // second entry's body length
	m := testExt("T", "")
	m.Body = batch
	m.SysFlag = SysFlagInnerBatch // AppendStoreRecord checks batches flagged for unwrapping
	rec := mustRecord(t, m)
	binary.BigEndian.PutUint32(rec[36:], uint32(SysFlagInnerBatch|SysFlagNeedUnwrap))
	msgs, err := DecodeAll(append(mustRecord(t, testExt("T", "ok")), rec...))
	de := requireDecodeError(t, err, len(mustRecord(t, testExt("T", "ok"))), "inner batch")
	require.Len(t, msgs, 1)
	require.Contains(t, de.Error(), "inner message at byte 23 of the record's body: body length 1000 exceeds the 3 bytes left")
}

// TestVerifyBodyCRC checks the optional CRC check.
func TestVerifyBodyCRC(t *testing.T) {
	rec := mustRecord(t, testExt("T", "body"))
	rec[8] ^= 0x01
	_, err := DecodeAll(rec)
	require.NoError(t, err, "not checked by default")
	d := Decoder{VerifyBodyCRC: true}
	_, err = d.DecodeAll(rec)
	requireDecodeError(t, err, 0, "bodyCRC")
}

// TestBatchCorruption corrupts client batch bodies.
func TestBatchCorruption(t *testing.T) {
	body, err := EncodeBatch([]*Message{
		{Flag: 1, Body: []byte("one"), Properties: PropertiesOf(Property{"a", "b"})},
		{Flag: 2, Body: []byte("two")},
	})
	require.NoError(t, err)
	firstLen := int(binary.BigEndian.Uint32(body))
	for cut := 0; cut <= len(body); cut++ {
		msgs, err := DecodeBatch(body[:cut])
		switch {
		case cut == 0:
			require.NoError(t, err)
			require.Empty(t, msgs)
		case cut == firstLen:
			require.NoError(t, err)
			require.Len(t, msgs, 1)
		case cut == len(body):
			require.NoError(t, err)
			require.Len(t, msgs, 2)
			require.Equal(t, "b", msgs[0].Property("a"))
			require.Equal(t, int32(2), msgs[1].Flag)
		default:
			var de *DecodeError
			require.ErrorAs(t, err, &de)
			want := 0
			if cut > firstLen {
				want = firstLen
			}
			require.Equal(t, want, de.Offset, "cut %d", cut)
			require.Len(t, msgs, min(1, want))
			require.True(t, strings.HasPrefix(err.Error(), "message: batch entry at byte "), err.Error())
		}
	}
	for _, tc := range []struct {
		name  string
		at    int
		v     uint32
		field string
	}{
		{"negative totalSize", 0, 0xFFFFFFFF, "totalSize"},
		{"negative body length", 16, 0x80000000, "body length"},
		{"huge body length", 16, 1 << 30, "body length"},
		{"totalSize past the fields", 0, uint32(firstLen - 1), "properties length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := bytes.Clone(body)
			binary.BigEndian.PutUint32(bad[tc.at:], tc.v)
			msgs, err := DecodeBatch(bad)
			var de *DecodeError
			require.ErrorAs(t, err, &de)
			require.Equal(t, 0, de.Offset)
			require.Equal(t, tc.field, de.Field)
			require.Empty(t, msgs)
		})
	}
}
