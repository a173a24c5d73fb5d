package remoting

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRocketMQHeaderRoundTrip(t *testing.T) {
	cmds := []Command{
		{Code: 11, Language: LanguageGo, Version: Version, Opaque: 42, Flag: FlagOneway,
			Remark: "Grüße, 世界", ExtFields: Fields{{"b", "2"}, {"a", "1"}, {"a", "1"}, {"", ""}, {"bin", "\x00\xff"}}},
		{Code: -32768, Language: LanguageUnknown, Version: 32767, Opaque: -1, Flag: -1},
		{Code: 32767, Language: LanguageCode(14), Version: -32768},
	}
	for _, c := range cmds {
		h, err := appendRocketMQHeader(nil, &c)
		require.NoError(t, err)
		size, err := rocketMQHeaderSize(&c)
		require.NoError(t, err)
		require.Len(t, h, size)
		var got Command
		require.NoError(t, decodeRocketMQHeader(string(h), &got))
		require.Equal(t, c, got)
	}
}

func TestRocketMQHeaderLayout(t *testing.T) {
	c := Command{Code: 11, Language: LanguageGo, Version: 409, Opaque: 7, Flag: 1, Remark: "ok", ExtFields: Fields{{"k", "vv"}}}
	h, err := appendRocketMQHeader(nil, &c)
	require.NoError(t, err)
	want := []byte{0, 11, 9, 1, 0x99, 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 2, 'o', 'k', 0, 0, 0, 9, 0, 1, 'k', 0, 0, 0, 2, 'v', 'v'}
	require.Equal(t, want, h)
}

func TestRocketMQHeaderEncodeErrors(t *testing.T) {
	tests := []struct {
		name string
		cmd  Command
		want string
	}{
		{"code above int16", Command{Code: 200050}, "code 200050 does not fit in int16"},
		{"code below int16", Command{Code: -32769}, "code -32769 does not fit in int16"},
		{"version above int16", Command{Version: 40000}, "version 40000 does not fit in int16"},
		{"key too long", Command{ExtFields: Fields{{strings.Repeat("k", 32768), ""}}}, "key of 32768 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := appendRocketMQHeader(nil, &tt.cmd)
			require.ErrorContains(t, err, tt.want)
			tt.cmd.Serialize = SerializeRocketMQ
			dst := []byte("keep")
			out, err := EncodeFrame(dst, &tt.cmd)
			require.ErrorContains(t, err, tt.want)
			require.ErrorContains(t, err, "encoding code")
			require.Equal(t, "keep", string(out))
		})
	}
}

func TestRocketMQHeaderDecodeErrors(t *testing.T) {
	base := func(remarkLen, extLen int32, tail ...byte) string {
		b := []byte{0, 11, 9, 1, 0x99, 0, 0, 0, 7, 0, 0, 0, 0}
		b = binary.BigEndian.AppendUint32(b, uint32(remarkLen))
		b = binary.BigEndian.AppendUint32(b, uint32(extLen))
		return string(append(b, tail...))
	}
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "0 bytes, need at least 21"},
		{"short", base(0, 0)[:20], "20 bytes, need at least 21"},
		{"negative remark", base(-1, 0), "remark length -1"},
		{"remark beyond header", base(100, 0), "remark length 100"},
		{"negative ext", base(0, -5), "ext block length -5"},
		{"ext beyond header", base(0, 10, 1, 2), "ext block length 10"},
		{"key length truncated", base(0, 1, 0), "key length truncated"},
		{"negative key length", base(0, 2, 0x80, 0), "key length -32768"},
		{"key beyond block", base(0, 3, 0, 5, 'k'), "key length 5"},
		{"value length truncated", base(0, 5, 0, 1, 'k', 0, 0), "value length truncated"},
		{"negative value length", base(0, 7, 0, 1, 'k', 0xff, 0xff, 0xff, 0xff), "value length -1"},
		{"value beyond block", base(0, 8, 0, 1, 'k', 0, 0, 0, 9, 'v'), "value length 9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Command
			require.ErrorContains(t, decodeRocketMQHeader(tt.in, &c), tt.want)
		})
	}
}

func TestRocketMQHeaderTrailingBytesIgnored(t *testing.T) {
	c := Command{Code: 1, ExtFields: Fields{{"k", "v"}}}
	h, err := appendRocketMQHeader(nil, &c)
	require.NoError(t, err)
	var got Command
	require.NoError(t, decodeRocketMQHeader(string(h)+"junk", &got))
	require.Equal(t, c, got)
}

func TestFieldsRepeatedKeys(t *testing.T) {
	f := Fields{{"a", "1"}, {"b", "2"}, {"a", "3"}}
	v, ok := f.Get("a")
	require.True(t, ok)
	require.Equal(t, "3", v, "last wins, as in Java's HashMap")
	f.Set("a", "4")
	require.Equal(t, Fields{{"a", "4"}, {"b", "2"}, {"a", "4"}}, f)
	f.Set("c", "5")
	require.Equal(t, "5", f.Value("c"))
	f.Delete("a")
	require.Equal(t, Fields{{"b", "2"}, {"c", "5"}}, f)
}
