package message

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// vectorText is the plain text of testdata/vectors.
func vectorText() string {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "line %05d of the lz4 and zstd test vector, compressed by the reference CLI tools\n", i)
	}
	return b.String()
}

// TestReferenceVectors decodes bodies compressed by Java's Deflater, the lz4 CLI (in
// lz4-java's framing) and the zstd CLI.
func TestReferenceVectors(t *testing.T) {
	want := vectorText()
	require.Len(t, want, 16400)
	for _, tc := range []struct {
		file  string
		codec Compression
	}{
		{"java-deflater-level5.zlib", CompressionZlib},
		{"java-deflater-level5.zlib", CompressionZlibDefault},
		{"lz4java-frame.lz4", CompressionLZ4},
		{"zstd-cli-level5.zst", CompressionZstd},
	} {
		t.Run(fmt.Sprintf("%s as %d", tc.file, tc.codec), func(t *testing.T) {
			stored, err := os.ReadFile(filepath.Join("testdata", "vectors", tc.file))
			require.NoError(t, err)
			m := testExt("T", "")
			m.Body = stored
			m.SysFlag = CompressionFlag(tc.codec)
			msgs, err := DecodeAll(mustRecord(t, m))
			require.NoError(t, err)
			require.Len(t, msgs, 1)
			require.Equal(t, want, string(msgs[0].Body))
			require.Equal(t, CompressionFlag(tc.codec)&^SysFlagCompressed, msgs[0].SysFlag, "COMPRESSED cleared, codec bits kept")
			require.Equal(t, BodyCRC(stored), msgs[0].BodyCRC)
		})
	}
}

// TestCompressLZ4Framing: Compress writes the frame descriptor of lz4-java's
// LZ4FrameOutputStream (4 MiB independent blocks, no checksums).
func TestCompressLZ4Framing(t *testing.T) {
	out := mustCompress(t, CompressionLZ4, vectorText())
	require.Equal(t, []byte{0x04, 0x22, 0x4D, 0x18, 0x60, 0x70, 0x73}, out[:7])
	require.Equal(t, []byte{0, 0, 0, 0}, out[len(out)-4:], "end mark, no content checksum after it")
}

func TestCompressZlibHeader(t *testing.T) {
	out := mustCompress(t, CompressionZlib, vectorText())
	require.Equal(t, []byte{0x78, 0x5E}, out[:2], "zlib at level 5, as the golden producer")
}

// TestCompressRoundTrip compresses with every codec and decodes through both a nil and a
// zero Decoder, for empty, small and multi-block bodies.
func TestCompressRoundTrip(t *testing.T) {
	defer goleak.VerifyNone(t)
	bodies := map[string][]byte{
		"empty": nil,
		"small": []byte("x"),
		"text":  []byte(vectorText()),
		"5MiB":  []byte(strings.Repeat(vectorText(), 5<<20/16400+1)), // more than one 4 MiB LZ4 block
		"binary": func() []byte {
			b := make([]byte, 70000)
			for i := range b {
				b[i] = byte(i * 7)
			}
			return b
		}(),
	}
	var d Decoder
	for _, c := range []Compression{CompressionZlibDefault, CompressionLZ4, CompressionZstd, CompressionZlib} {
		for name, body := range bodies {
			t.Run(c.String()+"/"+name, func(t *testing.T) {
				stored, err := Compress(body, c)
				require.NoError(t, err)
				require.NotEmpty(t, stored)
				m := testExt("T", "")
				m.Body = stored
				m.SysFlag = CompressionFlag(c)
				rec := mustRecord(t, m)
				for _, dec := range []*Decoder{nil, &d} {
					msgs, err := dec.DecodeAll(rec)
					require.NoError(t, err)
					require.Len(t, msgs, 1)
					require.Equal(t, len(body), len(msgs[0].Body))
					require.Equal(t, string(body), string(msgs[0].Body))
					require.Equal(t, len(msgs[0].Body), cap(msgs[0].Body))
					require.Zero(t, msgs[0].SysFlag&SysFlagCompressed)
				}
			})
		}
	}
	_, err := Compress([]byte("x"), 4)
	require.ErrorContains(t, err, "unknown compression type 4")
}

// TestEmptyCompressedBody: Java does not decompress an empty body and keeps the flag.
func TestEmptyCompressedBody(t *testing.T) {
	m := testExt("T", "")
	m.SysFlag = CompressionFlag(CompressionZstd)
	msgs, err := DecodeAll(mustRecord(t, m))
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.Nil(t, msgs[0].Body)
	require.Equal(t, CompressionFlag(CompressionZstd), msgs[0].SysFlag)
}

// TestDecoderConcurrent decodes compressed bodies of every codec from several goroutines
// through one Decoder (run with -race), and leaves no goroutine behind.
func TestDecoderConcurrent(t *testing.T) {
	defer goleak.VerifyNone(t)
	var body []byte
	for _, c := range []Compression{CompressionZlib, CompressionLZ4, CompressionZstd} {
		m := testExt("T", "")
		m.Body = mustCompress(t, c, vectorText())
		m.SysFlag = CompressionFlag(c)
		body = append(body, mustRecord(t, m)...)
	}
	var d Decoder
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 20 {
				msgs, err := d.DecodeAll(body)
				if err == nil && (len(msgs) != 3 || string(msgs[2].Body) != vectorText()) {
					err = fmt.Errorf("decoded %d messages", len(msgs))
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
