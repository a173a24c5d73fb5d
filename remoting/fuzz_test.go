package remoting

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzMaxFrame keeps the fuzzer's allocations small.
const fuzzMaxFrame = 1 << 20

// goldenHeaders returns the header bytes of every golden frame of serialization st.
func goldenHeaders(f *testing.F, st SerializeType) [][]byte {
	var out [][]byte
	for _, frame := range allGoldenFrames(f) {
		word := binary.BigEndian.Uint32(frame[4:])
		if SerializeType(word>>24) == st {
			out = append(out, frame[8:8+int(word&maxHeaderLen)])
		}
	}
	return out
}

// FuzzReadFrame reads a stream of frames. Invariants: no panic; every command read
// re-encodes to a frame that decodes to the same command.
func FuzzReadFrame(f *testing.F) {
	for _, frame := range allGoldenFrames(f) {
		f.Add(frame)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := NewFrameReader(bytes.NewReader(data), fuzzMaxFrame)
		for {
			cmd, err := fr.Read()
			if err != nil {
				var fe *FrameError
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.As(err, &fe) {
					t.Fatalf("unexpected error type: %v", err)
				}
				return
			}
			frame, err := EncodeFrame(nil, cmd)
			require.NoError(t, err)
			again, err := DecodeFrame(frame)
			require.NoError(t, err)
			require.Equal(t, cmd, again)
		}
	})
}

// FuzzFrameReaderChunks reads a stream of frames that arrives in pieces, with read
// timeouts between some of them. Invariants: no panic; the same commands, and the same
// kind of final error, as reading the stream at once; the memory held for a frame in
// progress never exceeds twice what arrived of it (or the first chunk).
func FuzzFrameReaderChunks(f *testing.F) {
	for i, frame := range allGoldenFrames(f) {
		f.Add(frame, []byte{byte(i), 3, 200, 1})
	}
	f.Fuzz(func(t *testing.T, data, steps []byte) {
		whole := NewFrameReader(bytes.NewReader(data), fuzzMaxFrame)
		pieces := NewFrameReader(&chunkedReader{data: data, steps: steps}, fuzzMaxFrame)
		for {
			want, wantErr := whole.Read()
			got, err := pieces.Read()
			for isTimeout(err) {
				// A plain comparison, not require.LessOrEqual: this runs once per timeout,
				// up to once per input byte, and testify's reflection made it 80% of the
				// target's time (4 s for a 1 MiB input timing out before every byte).
				if n, _, partial := pieces.Partial(); partial {
					if held, limit := cap(pieces.part), max(2*n, frameChunk+frameReadBufferSize); held > limit {
						t.Fatalf("holding %d bytes for a frame of which %d arrived (limit %d)", held, n, limit)
					}
				}
				got, err = pieces.Read()
			}
			if wantErr != nil {
				require.Error(t, err)
				require.Equal(t, errors.Is(wantErr, io.EOF), errors.Is(err, io.EOF), "%v / %v", wantErr, err)
				require.Equal(t, errors.Is(wantErr, io.ErrUnexpectedEOF), errors.Is(err, io.ErrUnexpectedEOF), "%v / %v", wantErr, err)
				var fe1, fe2 *FrameError
				require.Equal(t, errors.As(wantErr, &fe1), errors.As(err, &fe2), "%v / %v", wantErr, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, want, got)
		}
	})
}

// FuzzDecodeJSONHeader decodes a JSON header. Invariants: no panic; a decoded header
// re-encodes (as strict JSON) and decodes to the same command.
func FuzzDecodeJSONHeader(f *testing.F) {
	for _, h := range goldenHeaders(f, SerializeJSON) {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Command
		if decodeJSONHeader(string(data), &c) != nil {
			return
		}
		h := appendJSONHeader(nil, &c)
		var again Command
		require.NoError(t, decodeJSONHeader(string(h), &again), "%s", h)
		require.Equal(t, c, again)
	})
}

// FuzzDecodeRocketMQHeader decodes a ROCKETMQ header. Invariants: no panic; a decoded
// header re-encodes to exactly the bytes it was decoded from (minus ignored trailing
// bytes) and decodes to the same command.
func FuzzDecodeRocketMQHeader(f *testing.F) {
	for _, h := range goldenHeaders(f, SerializeRocketMQ) {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Command
		if decodeRocketMQHeader(string(data), &c) != nil {
			return
		}
		h, err := appendRocketMQHeader(nil, &c)
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(data, h), "re-encoded header is not a prefix of the input")
		var again Command
		require.NoError(t, decodeRocketMQHeader(string(h), &again))
		require.Equal(t, c, again)
	})
}
