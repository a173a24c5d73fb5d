package remoting

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// rawFrame builds a frame from its parts, with any length fields.
func rawFrame(total int32, st byte, headerLen uint32, rest []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(total))
	b = binary.BigEndian.AppendUint32(b, uint32(st)<<24|headerLen&maxHeaderLen)
	return append(b, rest...)
}

func TestEncodeDecodeFrame(t *testing.T) {
	for _, st := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
		t.Run(st.String(), func(t *testing.T) {
			cmd := NewRequest(11, Fields{{"topic", "T"}, {"queueId", "3"}}, []byte("body bytes"))
			cmd.Opaque = 9
			cmd.Serialize = st
			prefix := []byte("prefix")
			out, err := EncodeFrame(prefix, cmd)
			require.NoError(t, err)
			require.Equal(t, "prefix", string(out[:6]))
			frame := out[6:]
			require.Equal(t, uint32(len(frame)-4), binary.BigEndian.Uint32(frame))
			require.Equal(t, byte(st), frame[4])
			got, err := DecodeFrame(frame)
			require.NoError(t, err)
			require.Equal(t, cmd, got)
			require.Equal(t, len(got.Body), cap(got.Body), "body cannot be appended into the frame")

			got, err = NewFrameReader(bytes.NewReader(frame), 0).Read()
			require.NoError(t, err)
			require.Equal(t, cmd, got)
		})
	}
}

func TestEncodeFrameErrors(t *testing.T) {
	_, err := EncodeFrame(nil, &Command{Code: 5, Opaque: 6, Serialize: 7})
	require.ErrorContains(t, err, "encoding code 5 (opaque 6): unknown header serialization 7")
	_, err = EncodeFrame(nil, &Command{Remark: strings.Repeat("x", maxHeaderLen), Serialize: SerializeJSON})
	require.ErrorContains(t, err, "JSON header of 16777287 bytes is longer than the 16777215")
}

func TestDecodeFrameErrors(t *testing.T) {
	okHeader := []byte(`{}`)
	tests := []struct {
		name  string
		frame []byte
		want  string
	}{
		{"short", []byte{0, 0, 0}, "frame of 3 bytes is shorter than 8"},
		{"negative length", rawFrame(-1, 0, 0, nil), "frame length -1 is less than 4"},
		{"tiny length", rawFrame(3, 0, 0, nil), "frame length 3 is less than 4"},
		{"length mismatch", rawFrame(10, 0, 2, okHeader), "length field 10 does not match the 6 bytes"},
		{"header beyond frame", rawFrame(6, 0, 3, okHeader), "header length 3 exceeds the 2 bytes"},
		{"unknown serialization", rawFrame(6, 2, 2, okHeader), "unknown header serialization 2"},
		{"bad header", rawFrame(6, 0, 2, []byte("{]")), "JSON header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeFrame(tt.frame)
			var fe *FrameError
			require.ErrorAs(t, err, &fe)
			require.ErrorContains(t, err, tt.want)
			require.ErrorContains(t, err, "remoting: bad frame: ")
		})
	}
}

func TestFrameReaderRejects(t *testing.T) {
	okHeader := []byte(`{}`)
	tests := []struct {
		name   string
		stream []byte
		want   string
	}{
		{"negative length", rawFrame(-5, 0, 0, nil), "frame length -5 is less than 4"},
		{"min int32 length", rawFrame(-1<<31, 0, 0, nil), "frame length -2147483648 is less than 4"},
		{"tiny length", rawFrame(2, 0, 0, nil), "frame length 2 is less than 4"},
		{"oversized", rawFrame(DefaultMaxFrameSize-3, 0, 2, okHeader), "frame of 16777217 bytes exceeds the maximum frame size 16777216"},
		{"max int32 length", rawFrame(1<<31-1, 0, 2, okHeader), "exceeds the maximum frame size"},
		{"header beyond frame", rawFrame(100, 0, 97, okHeader), "header length 97 exceeds the 96 bytes"},
		{"unknown serialization", rawFrame(6, 0xff, 2, okHeader), "unknown header serialization 255"},
		{"garbage", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "exceeds the maximum frame size"},
		{"bad JSON header", rawFrame(6, 0, 2, []byte("{x")), "JSON header"},
		{"bad binary header", rawFrame(6, 1, 2, []byte{0, 0}), "ROCKETMQ header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := NewFrameReader(bytes.NewReader(tt.stream), 0)
			_, err := fr.Read()
			var fe *FrameError
			require.ErrorAs(t, err, &fe)
			require.ErrorContains(t, err, tt.want)
			_, again := fr.Read()
			require.Equal(t, err, again, "errors are sticky")
		})
	}
}

func TestFrameReaderTruncated(t *testing.T) {
	cmd := NewRequest(10, Fields{{"k", "v"}}, []byte("0123456789"))
	frame, err := EncodeFrame(nil, cmd)
	require.NoError(t, err)
	for _, n := range []int{1, 4, 7, 8, 9, len(frame) - 11, len(frame) - 1} {
		_, err := NewFrameReader(bytes.NewReader(frame[:n]), 0).Read()
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "cut at %d", n)
		require.ErrorContains(t, err, "stream ended inside a frame")
	}
	_, err = NewFrameReader(bytes.NewReader(nil), 0).Read()
	require.ErrorIs(t, err, io.EOF)
	require.NotErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestFrameReaderMaxFrameSize(t *testing.T) {
	cmd := NewRequest(10, nil, make([]byte, 2000))
	frame, err := EncodeFrame(nil, cmd)
	require.NoError(t, err)
	_, err = NewFrameReader(bytes.NewReader(frame), len(frame)).Read()
	require.NoError(t, err, "a frame exactly at the limit is accepted")
	_, err = NewFrameReader(bytes.NewReader(frame), len(frame)-1).Read()
	require.ErrorContains(t, err, "exceeds the maximum frame size")
}

// A frame announcing a large length is rejected before anything of that size is
// allocated: the limit, the header-length check and the serialization are checked first.
func TestFrameReaderRejectsWithoutAllocating(t *testing.T) {
	streams := [][]byte{
		rawFrame(1<<31-1, 0, 2, nil),
		rawFrame(DefaultMaxFrameSize, 0, 2, nil),
		rawFrame(1<<20, 0, 1<<20, nil),
		rawFrame(1<<20, 9, 2, nil),
	}
	for _, s := range streams {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := NewFrameReader(bytes.NewReader(s), 0).Read()
		runtime.ReadMemStats(&after)
		require.Error(t, err)
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<10), "bytes allocated")
	}
}

// Headers larger than the read buffer take the scratch path.
func TestFrameReaderLargeHeader(t *testing.T) {
	cmd := NewRequest(10, Fields{{"big", strings.Repeat("v", 3*frameReadBufferSize)}}, []byte("b"))
	frame, err := EncodeFrame(nil, cmd)
	require.NoError(t, err)
	stream := append(append([]byte(nil), frame...), frame...)
	fr := NewFrameReader(bytes.NewReader(stream), 0)
	for range 2 {
		got, err := fr.Read()
		require.NoError(t, err)
		require.Equal(t, cmd, got)
	}
}

// Bodies read by a FrameReader are their own allocations: reading the next frame does not
// change them.
func TestFrameReaderBodiesAreKept(t *testing.T) {
	var stream []byte
	for i := range 50 {
		var err error
		stream, err = EncodeFrame(stream, NewRequest(int32(i), nil, bytes.Repeat([]byte{byte(i)}, 100+i)))
		require.NoError(t, err)
	}
	fr := NewFrameReader(bytes.NewReader(stream), 0)
	var bodies [][]byte
	for {
		cmd, err := fr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		bodies = append(bodies, cmd.Body)
	}
	require.Len(t, bodies, 50)
	for i, b := range bodies {
		require.Equal(t, bytes.Repeat([]byte{byte(i)}, 100+i), b)
	}
}
