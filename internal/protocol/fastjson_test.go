package protocol

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
)

// valueEqual compares two trees, ignoring offsets.
func valueEqual(a, b Value) bool {
	if a.kind != b.kind || a.b != b.b || a.s != b.s || len(a.kids) != len(b.kids) {
		return false
	}
	for i := range a.kids {
		if !valueEqual(a.kids[i], b.kids[i]) {
			return false
		}
	}
	return true
}

// stringKeys returns v with every non-string object key replaced by a string holding
// its compact fastjson text: what writing in StyleStandard does to a tree.
func stringKeys(v Value) Value {
	if len(v.kids) == 0 {
		return v
	}
	out := v
	out.kids = make([]Value, len(v.kids))
	for i, k := range v.kids {
		if v.kind == KindObject && i%2 == 0 && k.kind != KindString {
			out.kids[i] = Value{kind: KindString, s: keyText(k)}
			continue
		}
		out.kids[i] = stringKeys(k)
	}
	return out
}

func mustParse(t *testing.T, s string) Value {
	t.Helper()
	v, err := Parse([]byte(s))
	require.NoError(t, err, s)
	return v
}

func TestParseValid(t *testing.T) {
	tests := []struct {
		name, in string
		want     any // canonical form
	}{
		{"standard object", `{"a":1,"b":[true,false,null],"c":"x"}`,
			map[string]any{"a": json.Number("1"), "b": []any{true, false, nil}, "c": "x"}},
		{"whitespace", " \t\r\n{ \"a\" : [ 1 , 2 ] }\n ", map[string]any{"a": []any{json.Number("1"), json.Number("2")}}},
		{"unquoted integer keys", `{0:"127.0.0.1:10911",1:"127.0.0.1:10921"}`,
			map[string]any{"0": "127.0.0.1:10911", "1": "127.0.0.1:10921"}},
		{"negative integer key", `{-1:"a"}`, map[string]any{"-1": "a"}},
		{"object key", `{{"brokerName":"b","queueId":0,"topic":"t"}:42}`,
			map[string]any{`{"brokerName":"b","queueId":0,"topic":"t"}`: json.Number("42")}},
		{"array key", `{[1,2]:"x"}`, map[string]any{`[1,2]`: "x"}},
		{"empty containers", `{"a":{},"b":[]}`, map[string]any{"a": map[string]any{}, "b": []any{}}},
		{"escapes", `"\"\\\/\b\f\n\r\t\u0041\u00e9\u4e2d"`, "\"\\/\b\f\n\r\tAé中"},
		{"surrogate pair", `"\ud83d\ude00"`, "😀"},
		{"lone surrogate", `"\ud83dx"`, "\ufffdx"},
		{"reversed surrogates", `"\ude00\ud83d"`, "\ufffd\ufffd"},
		{"raw UTF-8", `"标签😀"`, "标签😀"},
		{"numbers", `[0,-0,1.5,-2.25e-3,1E10,9223372036854775807,0.0]`, []any{json.Number("0"), json.Number("-0"),
			json.Number("1.5"), json.Number("-2.25e-3"), json.Number("1E10"), json.Number("9223372036854775807"),
			json.Number("0.0")}},
		{"scalar top level", `17`, json.Number("17")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, canonical(mustParse(t, tt.in)))
		})
	}
}

func TestParseErrors(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	deepKeys := strings.Repeat("{", MaxDepth+1)
	tests := []struct {
		name, in string
		offset   int
		msg      string
	}{
		{"empty", ``, 0, "unexpected end of input"},
		{"only space", `   `, 3, "unexpected end of input"},
		{"truncated object", `{"a":1`, 6, "expected ',' or '}'"},
		{"truncated key", `{"a`, 3, "end of input in a string"},
		{"truncated after colon", `{"a":`, 5, "unexpected end of input"},
		{"missing value", `{"a":}`, 5, "expected a value"},
		{"identifier key", `{a:1}`, 1, "expected an object key"},
		{"true as key", `{true:1}`, 1, "expected an object key"},
		{"missing colon", `{"a" 1}`, 5, "expected ':'"},
		{"trailing comma in array", `[1,]`, 3, "expected a value"},
		{"trailing comma in object", `{"a":1,}`, 7, "expected an object key"},
		{"bad separator", `[1;2]`, 2, "expected ',' or ']'"},
		{"trailing garbage", `{} x`, 3, "after the value"},
		{"leading zero", `01`, 1, "after the value"},
		{"lone minus", `-`, 1, "expected a digit"},
		{"bare fraction", `1.`, 2, "after '.'"},
		{"bare exponent", `1e+`, 3, "exponent"},
		{"bad literal", `tru`, 0, "expected true"},
		{"nul", `[nul]`, 1, "expected null"},
		{"bad escape", `"a\x"`, 2, "invalid escape"},
		{"short unicode escape", `"\u12"`, 1, "invalid \\u escape"},
		{"control character", "\"a\x01\"", 2, "control character"},
		{"control character after escape", "\"\\n\x01\"", 3, "control character"},
		{"unterminated escaped string", `"\n`, 3, "end of input in a string"},
		{"deep nesting", deep, MaxDepth, "nesting deeper than 64"},
		{"deep nesting in keys", deepKeys, MaxDepth, "nesting deeper than 64"},
		{"huge number", `[` + strings.Repeat("9", MaxNumberLen+1) + `]`, 1, "too long"},
		{"huge number key", `{` + strings.Repeat("1", 200) + `:1}`, 1, "too long"},
		{"stray byte", "\xff", 0, "byte 0xff"},
		{"too many values", "[" + strings.Repeat("0,", MaxValues) + "0]", 2*MaxValues - 1, "more than 2097152 values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			var je *JSONError
			require.ErrorAs(t, err, &je)
			require.Equal(t, tt.offset, je.Offset, err.Error())
			require.Contains(t, err.Error(), tt.msg)
			require.True(t, strings.HasPrefix(err.Error(), "json: offset "), err.Error())
		})
	}
}

// Every strict prefix of a golden body is an error with an offset inside the input.
func TestParseTruncatedGoldenBodies(t *testing.T) {
	frames := loadGolden(t)
	for _, f := range goldenBodies(t, frames, "GET_ROUTEINFO_BY_TOPIC", "GET_CONSUMER_RUNNING_INFO",
		"RESET_CONSUMER_CLIENT_OFFSET", "HEART_BEAT")[:6] {
		body := f.body(t)
		for n := 0; n < len(body); n++ {
			_, err := Parse(body[:n])
			var je *JSONError
			require.ErrorAs(t, err, &je, "%s: prefix %d", f.File, n)
			require.LessOrEqual(t, je.Offset, n)
		}
	}
}

func TestValueAccessors(t *testing.T) {
	v := mustParse(t, `{"max":9223372036854775807,"min":-9223372036854775808,"over":9223372036854775808,`+
		`"frac":1.5,"exp":1e3,"quoted":"123","quotedBad":"12a","f":3.9375,"zero":0.0,"t":true,"ts":"TRUE",`+
		`"n":null,"s":"x","i32":2147483648,"dup":1,"dup":2}`)
	get := func(name string) Value { return v.Get(name) }

	n, err := get("max").Int64()
	require.NoError(t, err)
	require.Equal(t, int64(math.MaxInt64), n)
	n, err = get("min").Int64()
	require.NoError(t, err)
	require.Equal(t, int64(math.MinInt64), n)
	n, err = get("quoted").Int64()
	require.NoError(t, err)
	require.Equal(t, int64(123), n)
	n, err = get("n").Int64()
	require.NoError(t, err)
	require.Zero(t, n)
	n, err = get("dup").Int64()
	require.NoError(t, err)
	require.Equal(t, int64(2), n, "the last duplicate wins, as in a Java map")

	for _, tc := range []struct{ field, msg string }{
		{"over", "out of int64 range"}, {"frac", "expected an integer"}, {"exp", "expected an integer"},
		{"quotedBad", "expected an integer"}, {"t", "expected integer, found boolean"},
	} {
		_, err := get(tc.field).Int64()
		var je *JSONError
		require.ErrorAs(t, err, &je, tc.field)
		require.Equal(t, get(tc.field).Offset(), je.Offset, tc.field)
		require.Contains(t, err.Error(), tc.msg, tc.field)
	}
	_, err = get("i32").Int32()
	require.ErrorContains(t, err, "out of int32 range")

	f, err := get("f").Float64()
	require.NoError(t, err)
	require.Equal(t, 3.9375, f)
	f, err = get("zero").Float64()
	require.NoError(t, err)
	require.Zero(t, f)
	_, err = get("s").Float64()
	require.ErrorContains(t, err, "expected a number")

	b, err := get("t").Bool()
	require.NoError(t, err)
	require.True(t, b)
	b, err = get("ts").Bool()
	require.NoError(t, err)
	require.True(t, b)
	_, err = get("s").Bool()
	require.ErrorContains(t, err, "expected boolean, found string")

	s, err := get("n").Str()
	require.NoError(t, err)
	require.Empty(t, s)
	_, err = get("max").Str()
	require.ErrorContains(t, err, "expected string, found number")

	require.False(t, get("absent").Exists())
	require.True(t, get("absent").IsNull())
	require.Equal(t, KindAbsent, mustParse(t, `[1]`).Get("x").Kind())
	_, err = get("s").Elems()
	require.ErrorContains(t, err, "expected array, found string")
	require.ErrorContains(t, get("s").Fields(func(string, Value) error { return nil }), "expected object")
	require.ErrorContains(t, get("s").Members(func(_, _ Value) error { return nil }), "expected object")

	stop := errors.New("stop")
	require.ErrorIs(t, v.Fields(func(string, Value) error { return stop }), stop)
}

func TestWriterStyles(t *testing.T) {
	q := message.Queue{Topic: "t", BrokerName: "b", QueueID: 3}
	write := func(style Style) string {
		w := NewWriter(style)
		w.BeginObject()
		w.Key("ids")
		w.BeginObject()
		w.IntKey(0)
		w.Str("a")
		w.IntKey(-1)
		w.Str("b")
		w.EndObject()
		w.Key("mq")
		w.BeginObject()
		w.QueueKey(q)
		w.Int(7)
		w.EndObject()
		w.Key("big")
		w.Int(1 << 60)
		w.Key("safe")
		w.Int(maxSafeInteger)
		w.Key("text")
		w.Str("é标😀\"\\\n\x01")
		w.EndObject()
		return string(w.Bytes())
	}
	tests := []struct {
		style  Style
		want   string
		strict bool
	}{
		{StyleFastjson, `{"ids":{0:"a",-1:"b"},"mq":{{"brokerName":"b","queueId":3,"topic":"t"}:7},` +
			`"big":1152921504606846976,"safe":9007199254740991,"text":"é标😀\"\\\n\u0001"}`, false},
		{StyleStandard, `{"ids":{"0":"a","-1":"b"},"mq":{"{\"brokerName\":\"b\",\"queueId\":3,\"topic\":\"t\"}":7},` +
			`"big":1152921504606846976,"safe":9007199254740991,"text":"é标😀\"\\\n\u0001"}`, true},
		{StyleBrowserCompatible, `{"ids":{"0":"a","-1":"b"},"mq":{"{\"brokerName\":\"b\",\"queueId\":3,\"topic\":\"t\"}":7},` +
			`"big":"1152921504606846976","safe":9007199254740991,"text":"\u00e9\u6807\ud83d\ude00\"\\\n\u0001"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.style.String(), func(t *testing.T) {
			got := write(tt.style)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.strict, json.Valid([]byte(got)), "encoding/json accepts the output")
			v := mustParse(t, got)
			k, addr := v.Get("ids").Member(1)
			id, err := k.Int64()
			require.NoError(t, err)
			require.Equal(t, int64(-1), id)
			require.Equal(t, "b", addr.Text())
			text, err := v.Get("text").Str()
			require.NoError(t, err)
			require.Equal(t, "é标😀\"\\\n\x01", text)
			q2, err := decodeQueue(func() Value { k, _ := v.Get("mq").Member(0); return k }())
			require.NoError(t, err)
			require.Equal(t, q, q2)
		})
	}
}

func TestWriterFloat(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0.0"}, {2, "2.0"}, {1.6, "1.6"}, {3.9375, "3.9375"}, {-35.75, "-35.75"}, {1e21, "1000000000000000000000.0"},
		{math.NaN(), "null"}, {math.Inf(1), "null"},
	} {
		w := NewWriter(StyleStandard)
		w.Float(tc.f)
		require.Equal(t, tc.want, string(w.Bytes()))
	}
}

func TestWriterInvalidUTF8(t *testing.T) {
	w := NewWriter(StyleStandard)
	w.Str("a\xffb")
	require.Equal(t, "\"a\xffb\"", string(w.Bytes()))
	w = NewWriter(StyleBrowserCompatible)
	w.Str("a\xffb")
	require.Equal(t, `"a\ufffdb"`, string(w.Bytes()))
}

func TestWriteTreeRoundTrip(t *testing.T) {
	in := `{"a":[1,-2.5e3,"x",true,null,{}],{"k":[{0:1}]}:{-7:"y"},"\u00e9":"\ud83d\ude00"}`
	v := mustParse(t, in)
	for _, style := range []Style{StyleFastjson, StyleStandard, StyleBrowserCompatible} {
		w := NewWriter(style)
		w.Value(v)
		back := mustParse(t, string(w.Bytes()))
		want := v
		if style != StyleFastjson {
			want = stringKeys(v)
			require.True(t, json.Valid(w.Bytes()), "%s output is standard JSON: %s", style, w.Bytes())
		}
		require.True(t, valueEqual(want, back), "%s: %s", style, w.Bytes())
	}
	w := NewWriter(StyleFastjson)
	w.Value(v)
	require.Equal(t, `{"a":[1,-2.5e3,"x",true,null,{}],{"k":[{0:1}]}:{-7:"y"},"é":"😀"}`, string(w.Bytes()))
}

// The readers accept every golden body and read it as goldenize did (index.json's
// bodyJson, where non-string keys were turned into their text).
func TestParseGoldenBodies(t *testing.T) {
	frames := loadGolden(t)
	n := 0
	for _, f := range frames {
		if f.BodyEncoding != "text" || len(f.BodyJSON) == 0 || string(f.BodyJSON) == "null" {
			continue
		}
		if _, err := os.Stat(filepath.Join("testdata", f.Scenario, f.File)); err != nil {
			continue // body file not copied
		}
		n++
		t.Run(f.Scenario+"/"+f.File, func(t *testing.T) {
			data := f.body(t)
			v, err := Parse(data)
			require.NoError(t, err)
			require.Equal(t, decodeGeneric(t, f.BodyJSON), canonical(v))
			require.Equal(t, *f.BodyStrict, json.Valid(data), "bodyJsonStrict")
		})
	}
	require.Greater(t, n, 50)
}
