package remoting

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func decodeJSON(t *testing.T, s string) *Command {
	t.Helper()
	var c Command
	require.NoError(t, decodeJSONHeader(s, &c))
	return &c
}

func TestJSONHeaderEncode(t *testing.T) {
	tests := []struct {
		name string
		cmd  Command
		want string
	}{
		{
			name: "request with fields",
			cmd: Command{Code: 11, Language: LanguageGo, Version: Version, Opaque: 7,
				ExtFields: Fields{{"consumerGroup", "g"}, {"queueId", "0"}}},
			want: `{"code":11,"language":"GO","version":409,"opaque":7,"flag":0,"extFields":{"consumerGroup":"g","queueId":"0"}}`,
		},
		{
			name: "response with remark, no ext fields",
			cmd:  Command{Code: 19, Language: LanguageJava, Version: 409, Opaque: -5, Flag: FlagResponse, Remark: "NO_MESSAGE_IN_QUEUE"},
			want: `{"code":19,"language":"JAVA","version":409,"opaque":-5,"flag":1,"remark":"NO_MESSAGE_IN_QUEUE"}`,
		},
		{
			name: "empty but present ext fields",
			cmd:  Command{Code: 0, Language: LanguageUnknown, Flag: 3, ExtFields: Fields{}},
			want: `{"code":0,"language":"UNKNOWN","version":0,"opaque":0,"flag":3,"extFields":{}}`,
		},
		{
			name: "escapes and non-ASCII",
			cmd: Command{Code: 1, Language: LanguageGo, Remark: "a\"b\\c\nd\re\tf\bg\fh\x01\x1f\x7f/é世😀",
				ExtFields: Fields{{"properties", "k\x01v\x02"}, {"bad", "x\xffy"}}},
			want: `{"code":1,"language":"GO","version":0,"opaque":0,"flag":0,"remark":"a\"b\\c\nd\re\tf\bg\fh\u0001\u001f` + "\x7f/é世😀" +
				`","extFields":{"properties":"k\u0001v\u0002","bad":"x\ufffdy"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(appendJSONHeader(nil, &tt.cmd))
			require.Equal(t, tt.want, got)
			require.True(t, json.Valid([]byte(got)), "our header is strict JSON")
		})
	}
}

func TestJSONHeaderRoundTrip(t *testing.T) {
	cmds := []Command{
		{Code: 11, Language: LanguageGo, Version: Version, Opaque: 1 << 30, Flag: FlagOneway,
			Remark: "Grüße, 世界 ✓ \U0001F600 \"quoted\" \\ \n\t", ExtFields: Fields{
				{"greeting", "Grüße, 世界 ✓"}, {"properties", "a\x01b\x02c\x01d\x02"}, {"", ""}, {"dup", "1"}, {"dup", "2"},
			}},
		{Code: -1, Language: LanguageNodeJS, Version: -2, Opaque: -2147483648, Flag: 2147483647},
		{Code: 2147483647, Language: LanguageJava, ExtFields: Fields{}},
	}
	for _, c := range cmds {
		h := appendJSONHeader(nil, &c)
		got := decodeJSON(t, string(h))
		require.Equal(t, c, *got)
	}
}

func TestJSONHeaderDecode(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Command
	}{
		{
			name: "java key order, unknown key, absent ext fields",
			in:   `{"code":0,"flag":1,"language":"JAVA","opaque":3,"serializeTypeCurrentRPC":"JSON","version":409}`,
			want: Command{Flag: 1, Language: LanguageJava, Opaque: 3, Version: 409},
		},
		{
			name: "whitespace everywhere",
			in:   " \r\n\t{ \"code\" : 11 ,\n\"extFields\" : { \"a\" : \"1\" , \"b\" : \"2\" } , \"language\" : \"GO\" } \n",
			want: Command{Code: 11, Language: LanguageGo, ExtFields: Fields{{"a", "1"}, {"b", "2"}}},
		},
		{
			name: "unknown language name",
			in:   `{"language":"COBOL"}`,
			want: Command{Language: LanguageUnknown},
		},
		{
			name: "absent language is JAVA, Java's default",
			in:   `{}`,
			want: Command{},
		},
		{
			name: "nulls",
			in:   `{"code":null,"language":null,"remark":null,"extFields":null,"flag":null}`,
			want: Command{Language: LanguageUnknown},
		},
		{
			name: "empty ext fields",
			in:   `{"extFields":{}}`,
			want: Command{ExtFields: Fields{}},
		},
		{
			name: "ext values: numbers and booleans kept as text, null dropped",
			in:   `{"extFields":{"n":-12,"f":1.5e3,"t":true,"x":false,"z":null,"s":""}}`,
			want: Command{ExtFields: Fields{{"n", "-12"}, {"f", "1.5e3"}, {"t", "true"}, {"x", "false"}, {"s", ""}}},
		},
		{
			name: "repeated keys: last header value wins, ext entries kept",
			in:   `{"code":1,"code":2,"extFields":{"k":"a","k":"b"}}`,
			want: Command{Code: 2, ExtFields: Fields{{"k", "a"}, {"k", "b"}}},
		},
		{
			name: "escapes",
			in:   `{"remark":"\"\\\/\b\f\n\r\t\u0041\u00e9\u4e16\ud83d\ude00"}`,
			want: Command{Remark: "\"\\/\b\f\n\r\tAé世😀"},
		},
		{
			name: "lone surrogates become U+FFFD",
			in:   `{"remark":"a\ud83db\ude00c\ud83d\u0041"}`,
			want: Command{Remark: "a\uFFFDb\uFFFDc\uFFFDA"},
		},
		{
			name: "raw non-ASCII and control characters",
			in:   "{\"remark\":\"Grüße\x01世界\",\"extFields\":{\"é\":\"✓\"}}",
			want: Command{Remark: "Grüße\x01世界", ExtFields: Fields{{"é", "✓"}}},
		},
		{
			name: "invalid UTF-8 becomes U+FFFD",
			in:   "{\"remark\":\"a\xffb\",\"extFields\":{\"k\":\"\xc3\\n\"}}",
			want: Command{Remark: "a\uFFFDb", ExtFields: Fields{{"k", "\uFFFD\n"}}},
		},
		{
			name: "unknown keys with nested values",
			in:   `{"x":{"a":[1,2,{"b":null}],"c":"}"},"y":[],"z":-0.5e-3,"w":true,"code":5}`,
			want: Command{Code: 5},
		},
		{
			name: "int32 limits",
			in:   `{"code":-2147483648,"opaque":2147483647}`,
			want: Command{Code: -2147483648, Opaque: 2147483647},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, *decodeJSON(t, tt.in))
		})
	}
}

func TestJSONHeaderDecodeErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", ``, "expected '{'"},
		{"not an object", `[]`, "expected '{'"},
		{"truncated", `{"code":1`, "expected ',' or '}'"},
		{"missing colon", `{"code" 1}`, "expected ':'"},
		{"code too large", `{"code":2147483648}`, `"code": 2147483648 is not an int32`},
		{"code a fraction", `{"code":1.5}`, "fraction or exponent"},
		{"code a string", `{"code":"11"}`, `"code": expected an integer`},
		{"language a number", `{"language":9}`, `"language": expected a string`},
		{"remark a number", `{"remark":1}`, `"remark": expected a string`},
		{"ext fields an array", `{"extFields":[]}`, "extFields: expected an object"},
		{"ext value an object", `{"extFields":{"k":{}}}`, `extFields: value of "k" must be a string`},
		{"unterminated string", `{"remark":"abc`, "unterminated string"},
		{"unterminated escaped string", `{"remark":"a\n`, "unterminated string"},
		{"bad escape", `{"remark":"\x41"}`, `invalid escape '\x'`},
		{"short unicode escape", `{"remark":"\u12"}`, `invalid \u escape`},
		{"trailing data", `{} {}`, "unexpected data after the header object"},
		{"trailing comma", `{"code":1,}`, "expected a string"},
		{"bad literal", `{"x":tru}`, "invalid value"},
		{"bad number", `{"x":-}`, "invalid number"},
		{"deep nesting", `{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, "nested deeper than 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Command
			err := decodeJSONHeader(tt.in, &c)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
			require.Contains(t, err.Error(), "at offset")
		})
	}
}

func TestLanguageNames(t *testing.T) {
	for l := LanguageCode(0); l <= LanguageNodeJS; l++ {
		require.NotEqual(t, "UNKNOWN", l.String(), "code %d", l)
		require.Equal(t, l, LanguageByName(l.String()))
	}
	require.Equal(t, "UNKNOWN", LanguageCode(14).String())
	require.Equal(t, LanguageUnknown, LanguageByName("go"), "names are case-sensitive, as in Java")
}
