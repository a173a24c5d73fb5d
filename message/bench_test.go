package message

import (
	"fmt"
	"testing"
)

// BenchmarkDecodeAll decodes pull bodies of 32 records with typical properties (TAGS,
// KEYS, UNIQ_KEY, CLUSTER). Report with -benchmem; ns/op is per body of 32 messages.
func BenchmarkDecodeAll(b *testing.B) {
	for _, bc := range []struct {
		name     string
		size     int
		compress bool
		codec    Compression
	}{
		{"32x1KiB", 1024, false, 0},
		{"32x128B", 128, false, 0},
		{"32x1KiB-zlib", 1024, true, CompressionZlib},
		{"32x1KiB-lz4", 1024, true, CompressionLZ4},
		{"32x1KiB-zstd", 1024, true, CompressionZstd},
	} {
		b.Run(bc.name, func(b *testing.B) {
			body := pullBody(b, 32, bc.size, bc.compress, bc.codec)
			var d Decoder
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				msgs, err := d.DecodeAll(body)
				if err != nil || len(msgs) != 32 {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeAllWith adds MIN_OFFSET and MAX_OFFSET to every message, as the pull
// path does.
func BenchmarkDecodeAllWith(b *testing.B) {
	body := pullBody(b, 32, 1024, false, 0)
	var d Decoder
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.DecodeAllWith(body, Property{PropertyMinOffset, "0"}, Property{PropertyMaxOffset, "1032"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeOwned is BenchmarkDecodeAllWith as the pull path now decodes: strings
// point into the body, the extra properties are a shared tail.
func BenchmarkDecodeOwned(b *testing.B) { benchDecodePull(b, (*Decoder).DecodeOwned) }

// BenchmarkDecodeLent is BenchmarkDecodeOwned as the pull path decodes a lent body
// (WithLentBodies): strings copied into one allocation, the extra properties a shared
// tail.
func BenchmarkDecodeLent(b *testing.B) { benchDecodePull(b, (*Decoder).DecodeLent) }

// benchDecodePull decodes a pull of 32 messages of 128 B and of 1 KiB with decode.
func benchDecodePull(b *testing.B, decode func(*Decoder, []byte, ...Property) ([]*Ext, error)) {
	for _, size := range []int{128, 1024} {
		b.Run(fmt.Sprintf("32x%dB", size), func(b *testing.B) {
			body := pullBody(b, 32, size, false, 0)
			var d Decoder
			// Made once: through a func value the variadic slice would escape per call.
			extra := []Property{{PropertyMinOffset, "0"}, {PropertyMaxOffset, "1032"}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decode(&d, body, extra...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendStoreRecord encodes 32 records of 1 KiB into a reused buffer.
func BenchmarkAppendStoreRecord(b *testing.B) {
	msgs, err := DecodeAll(pullBody(b, 32, 1024, false, 0))
	if err != nil {
		b.Fatal(err)
	}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = buf[:0]
		for _, m := range msgs {
			if buf, err = AppendStoreRecord(buf, m); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkEncodeBatch encodes a SEND_BATCH_MESSAGE body of 32 messages of 1 KiB.
func BenchmarkEncodeBatch(b *testing.B) {
	exts, err := DecodeAll(pullBody(b, 32, 1024, false, 0))
	if err != nil {
		b.Fatal(err)
	}
	msgs := make([]*Message, len(exts))
	for i, m := range exts {
		msgs[i] = &m.Message
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeBatch(msgs); err != nil {
			b.Fatal(err)
		}
	}
}
