package message

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// encoderSeeds returns store-record bodies made by the encoder: IPv6 hosts, a v2 topic,
// every codec, inner batches (plain and compressed) and several records back to back.
func encoderSeeds(t testing.TB) [][]byte {
	t.Helper()
	rec := func(m *Ext) []byte { return mustRecord(t, m) }
	var seeds [][]byte

	v6 := testExt(strings.Repeat("LongTopic", 16), "v2 topic, IPv6 hosts")
	v6.BornHost = netip.MustParseAddrPort("[2001:db8::7]:40000")
	v6.StoreHost = netip.MustParseAddrPort("[2001:db8::1]:10911")
	seeds = append(seeds, rec(v6))

	three := append(append(rec(testExt("T", "one")), rec(testExt("T", "two"))...), rec(testExt("U", ""))...)
	seeds = append(seeds, three)

	for _, c := range []Compression{CompressionZlibDefault, CompressionLZ4, CompressionZstd, CompressionZlib} {
		m := testExt("T", "")
		m.Body = mustCompress(t, c, strings.Repeat("compressible body ", 20))
		m.SysFlag = CompressionFlag(c)
		seeds = append(seeds, rec(m))
	}

	batch, err := EncodeBatch([]*Message{
		{Flag: 1, Body: []byte("inner one"), Properties: PropertiesOf(Property{PropertyUniqKey, "U1"})},
		{Flag: 2, Body: []byte("inner two"), Properties: PropertiesOf(Property{PropertyTags, "t"})},
	})
	require.NoError(t, err)
	inner := testExt("T", "")
	inner.Body = batch
	inner.SysFlag = SysFlagInnerBatch | SysFlagNeedUnwrap
	inner.Properties = PropertiesOf(Property{PropertyWaitStoreMsgOK, "false"})
	seeds = append(seeds, append(rec(inner), rec(testExt("T", "after"))...))
	inner.Body = mustCompress(t, CompressionZstd, string(batch))
	inner.SysFlag |= CompressionFlag(CompressionZstd)
	seeds = append(seeds, rec(inner))
	return seeds
}

// within reports whether b lies inside buf.
func within(b, buf []byte) bool {
	if len(b) == 0 || len(buf) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	q := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	return p >= q && p+uintptr(len(b)) <= q+uintptr(len(buf))
}

// overlaps reports whether b and buf share any byte.
func overlaps(b, buf []byte) bool {
	if len(b) == 0 || len(buf) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	q := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	return p < q+uintptr(len(buf)) && q < p+uintptr(len(b))
}

// FuzzDecodeAll: no input panics; the fast and field-by-field record parsers agree;
// every decoded body lies within the input (or wholly outside it, in decompression
// output) with its capacity clipped; every decoded message re-encodes to a record that
// decodes to the same values.
func FuzzDecodeAll(f *testing.F) {
	records, _ := loadGolden(f)
	for _, c := range records {
		f.Add(c.body)
	}
	for _, s := range encoderSeeds(f) {
		f.Add(s)
	}
	d := &Decoder{MaxDecodedSize: 1 << 20} // shared by every input, as a consumer shares one
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ffe := parseRecord(data)
		slow, sfe := parseRecordSlow(data)
		require.Equal(t, sfe == nil, ffe == nil, "parsers disagree: slow %v, fast %v", sfe, ffe)
		if ffe == nil {
			require.Equal(t, slow, fast)
		} else {
			require.Equal(t, sfe, ffe, "the fast path falls back to the slow one")
		}

		// What the pull service decodes must read the same as the copying decoder's.
		requireSameDecoding(t, d, data, pullExtra...)

		msgs, err := d.DecodeAll(data)
		if err != nil {
			var de *DecodeError
			require.True(t, errors.As(err, &de), "error type: %v", err)
			require.GreaterOrEqual(t, de.Offset, 0)
			require.Less(t, de.Offset, len(data))
			require.NotEmpty(t, de.Field)
		}
		for i, m := range msgs {
			require.Equal(t, len(m.Body), cap(m.Body), "message %d: capacity clipped", i)
			require.True(t, within(m.Body, data) || !overlaps(m.Body, data), "message %d: body straddles the input", i)

			again := *m
			if again.SysFlag&batchFlags == batchFlags {
				again.SysFlag &^= SysFlagNeedUnwrap // unwrapped already: store it as an ordinary record
			}
			rec, err := AppendStoreRecord(nil, &again)
			if err != nil {
				// Only an unwrapped message, whose WAIT pushed its properties past the
				// int16 length, cannot be stored again.
				require.Contains(t, err.Error(), "exceed the 32767-byte maximum", "message %d", i)
				require.NotZero(t, m.SysFlag&SysFlagInnerBatch)
				continue
			}
			back, err := DecodeAll(rec)
			require.NoError(t, err, "message %d re-encoded", i)
			require.Len(t, back, 1)
			want, got := fieldsOf(&again), fieldsOf(back[0])
			want.StoreSize, want.BodyCRC = int32(len(rec)), BodyCRC(again.Body)
			require.Equal(t, want, got, "message %d re-encoded", i)
			require.Equal(t, m.Properties.String(), back[0].Properties.String())
		}
	})
}

// batchSeeds returns client batch bodies made by EncodeBatch.
func batchSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, msgs := range [][]*Message{
		{{Body: []byte("x")}},
		{{Flag: 7, Body: []byte("one"), Properties: PropertiesOf(Property{"a", "b"}, Property{"KEYS", "k1 k2"})}, {Body: nil}},
	} {
		b, err := EncodeBatch(msgs)
		require.NoError(t, err)
		seeds = append(seeds, b)
	}
	return seeds
}

// FuzzDecodeBatch: no input panics; decoded messages encode again, to the input itself
// (but for the unused magic and bodyCRC) when all of it decoded.
func FuzzDecodeBatch(f *testing.F) {
	_, batches := loadGolden(f)
	for _, c := range batches {
		f.Add(c.body)
	}
	for _, s := range batchSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, err := DecodeBatch(data)
		if err != nil {
			var de *DecodeError
			require.True(t, errors.As(err, &de), "error type: %v", err)
			require.Less(t, de.Offset, len(data))
			require.True(t, strings.HasPrefix(err.Error(), "message: batch entry at byte "))
		}
		for _, m := range msgs {
			require.Equal(t, len(m.Body), cap(m.Body))
			require.True(t, len(m.Body) == 0 || within(m.Body, data))
		}
		enc, eerr := EncodeBatch(msgs)
		require.NoError(t, eerr)
		if err == nil {
			want := bytes.Clone(data)
			for off := 0; off < len(want); off += int(binary.BigEndian.Uint32(want[off:])) {
				copy(want[off+4:off+12], make([]byte, 8))
			}
			require.Equal(t, want, enc)
		}
		back, err := DecodeBatch(enc)
		require.NoError(t, err)
		require.Len(t, back, len(msgs))
		for i := range msgs {
			require.Equal(t, msgs[i].Flag, back[i].Flag)
			require.Equal(t, string(msgs[i].Body), string(back[i].Body))
			require.Equal(t, msgs[i].Properties.String(), back[i].Properties.String())
		}
	})
}

// javaProperties is a model of Java 5's MessageDecoder.string2messageProperties: pairs
// split on 0x02, each on its first 0x01; segments shorter than 3 bytes, empty names and
// empty values skipped; the last of a name wins. order lists names by their last
// occurrence.
func javaProperties(s string) (m map[string]string, order []string) {
	m = map[string]string{}
	for _, seg := range strings.Split(s, "\x02") {
		if len(seg) < 3 {
			continue
		}
		name, value, ok := strings.Cut(seg, "\x01")
		if !ok || name == "" || value == "" {
			continue
		}
		if _, dup := m[name]; dup {
			for i, n := range order {
				if n == name {
					order = append(order[:i], order[i+1:]...)
					break
				}
			}
		}
		m[name] = value
		order = append(order, name)
	}
	return m, order
}

// FuzzProperties checks the wire-form reader against the Java model, and that edits and
// the encoder keep every property.
func FuzzProperties(f *testing.F) {
	records, _ := loadGolden(f)
	for _, c := range records {
		for _, m := range c.frame.Messages {
			f.Add(m.PropertiesRaw)
		}
	}
	for _, s := range []string{"", "a\x01b", "a\x01b\x01c\x02", "\x01\x02\x01", "a\x011\x02a\x012", "ab\x02\x01c\x02x\x01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		want, order := javaProperties(raw)
		p := PropertiesFromWire(raw)
		require.Equal(t, raw, p.String())
		require.Equal(t, want, p.Map())
		require.Equal(t, len(want), p.Len())
		var got []string
		p.Range(func(n, v string) bool {
			got = append(got, n)
			require.Equal(t, want[n], v)
			return true
		})
		require.Equal(t, order, got)
		for n, v := range want {
			require.Equal(t, v, p.Value(n))
		}

		// With a tail (as DecodeOwned gives), it reads as the wire form with the tail's
		// pairs appended.
		tail := []Property{{PropertyMaxOffset, "9"}, {"a", "tail"}}
		withTail := Properties{raw: raw, pairs: tail}
		joined := PropertiesFromWire(withTail.String())
		require.Equal(t, viewOf(&joined), viewOf(&withTail))

		// Edited, every property survives, in the same order.
		q := PropertiesFromWire(raw)
		q.Set("fuzz-added", "v")
		want["fuzz-added"] = "v"
		require.Equal(t, want, q.Map())
		if len(order) > 0 {
			q.Delete(order[0])
			delete(want, order[0])
			require.Equal(t, want, q.Map())
		}

		// The encoder writes the wire form back as it is, and changed properties when
		// they can survive the wire.
		for _, props := range []Properties{p, q} {
			m := testExt("T", "b")
			m.Properties = props
			rec, err := AppendStoreRecord(nil, m)
			if err != nil {
				require.True(t, errors.Is(err, errBadProperty) || strings.Contains(err.Error(), "32767-byte maximum"), err.Error())
				continue
			}
			msgs, err := DecodeAll(rec)
			require.NoError(t, err)
			require.Equal(t, props.Map(), msgs[0].Properties.Map())
		}
	})
}
