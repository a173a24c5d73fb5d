package protocol

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/remoting"
)

// goldenScenarios are the capture folders copied from ../shared/golden into testdata.
var goldenScenarios = []string{
	"a_produce", "b_consume_retry", "c_orderly", "d2_consume_directly",
	"d_admin_running_consumer", "f_edge_pulls", "g_java_binary_longpoll",
}

// goldenFrame is the part of an index.json frame entry the tests read.
type goldenFrame struct {
	Scenario      string            `json:"-"`
	File          string            `json:"file"`
	Kind          string            `json:"kind"`
	Dir           string            `json:"dir"`
	Code          int32             `json:"code"`
	CodeName      string            `json:"codeName"`
	RequestCode   int32             `json:"requestCode"`
	RequestName   string            `json:"requestName"`
	Language      string            `json:"language"`
	Opaque        int32             `json:"opaque"`
	Remark        *string           `json:"remark"`
	ExtFields     map[string]string `json:"extFields"`
	ExtFieldOrder []string          `json:"extFieldOrder"`
	BodyLength    int               `json:"bodyLength"`
	BodyEncoding  string            `json:"bodyEncoding"`
	BodyText      string            `json:"bodyText"`
	BodyJSON      json.RawMessage   `json:"bodyJson"`
	BodyStrict    *bool             `json:"bodyJsonStrict"`
}

// name is the request name of a request, or of the request a response answers.
func (f *goldenFrame) name() string {
	if f.Kind == "response" {
		return f.RequestName
	}
	return f.CodeName
}

// fields returns the ext fields in wire order.
func (f *goldenFrame) fields() remoting.Fields {
	out := make(remoting.Fields, 0, len(f.ExtFields))
	for _, k := range f.ExtFieldOrder {
		out = append(out, remoting.Field{Key: k, Value: f.ExtFields[k]})
	}
	return out
}

// body returns the frame's body: the tail of its .bin file after the length word, the
// serialize-type/header-length word and the header.
func (f *goldenFrame) body(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", f.Scenario, f.File))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(data), 8, f.File)
	total := binary.BigEndian.Uint32(data[0:4])
	require.Equal(t, int(total), len(data)-4, "%s: length word", f.File)
	headerLen := int(binary.BigEndian.Uint32(data[4:8]) & 0xFFFFFF)
	require.LessOrEqual(t, 8+headerLen, len(data), f.File)
	body := data[8+headerLen:]
	require.Len(t, body, f.BodyLength, f.File)
	if f.BodyEncoding == "text" {
		require.Equal(t, f.BodyText, string(body), "%s: body text", f.File)
	}
	return body
}

// goldenScenarios5x are the RocketMQ 5.3.3 capture folders (README-5x.md), loaded apart:
// the tests over loadGolden hold 4.9.8's facts (broker addresses, header fields 5.x
// adds), and golden_pop_test.go checks these.
var goldenScenarios5x = []string{"p_pop_533", "p2_pull_533", "p3_pop_rocketmq_533"}

// loadGolden returns the frames of every copied 4.9.8 scenario.
func loadGolden(t testing.TB) []*goldenFrame { return loadGoldenFrom(t, goldenScenarios...) }

// loadGoldenFrom returns the frames of the named copied scenarios.
func loadGoldenFrom(t testing.TB, scenarios ...string) []*goldenFrame {
	t.Helper()
	var all []*goldenFrame
	for _, s := range scenarios {
		data, err := os.ReadFile(filepath.Join("testdata", s, "index.json"))
		require.NoError(t, err)
		var idx struct {
			Frames []*goldenFrame `json:"frames"`
		}
		require.NoError(t, json.Unmarshal(data, &idx), s)
		for _, f := range idx.Frames {
			f.Scenario = s
			all = append(all, f)
		}
	}
	return all
}

// goldenFrameByFile returns one frame.
func goldenFrameByFile(t testing.TB, frames []*goldenFrame, scenario, prefix string) *goldenFrame {
	t.Helper()
	for _, f := range frames {
		if f.Scenario == scenario && len(f.File) >= len(prefix) && f.File[:len(prefix)] == prefix {
			return f
		}
	}
	t.Fatalf("no frame %s/%s", scenario, prefix)
	return nil
}

// goldenBodies returns the frames whose body file was copied, for the named requests.
func goldenBodies(t testing.TB, frames []*goldenFrame, names ...string) []*goldenFrame {
	t.Helper()
	var out []*goldenFrame
	for _, f := range frames {
		if f.BodyLength == 0 || f.BodyEncoding != "text" {
			continue
		}
		for _, n := range names {
			if f.name() == n {
				if _, err := os.Stat(filepath.Join("testdata", f.Scenario, f.File)); err == nil {
					out = append(out, f)
				}
			}
		}
	}
	require.NotEmpty(t, out, "no golden bodies for %v", names)
	return out
}

// canonical turns a parsed value into generic Go values with object keys as strings
// (non-string keys become their compact fastjson text, as goldenize stringified them)
// and numbers as json.Number, to compare with index.json's bodyJson.
func canonical(v Value) any {
	switch v.Kind() {
	case KindNull, KindAbsent:
		return nil
	case KindBool:
		b, _ := v.Bool()
		return b
	case KindNumber:
		return json.Number(v.Text())
	case KindString:
		return v.Text()
	case KindArray:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = canonical(v.Index(i))
		}
		return out
	}
	out := make(map[string]any, v.Len())
	for i := 0; i < v.Len(); i++ {
		k, e := v.Member(i)
		out[sortedKeyText(k)] = canonical(e)
	}
	return out
}

// sortedKeyText is keyText with object members sorted by key, as goldenize wrote the
// stringified keys of index.json's bodyJson.
func sortedKeyText(k Value) string {
	return keyText(sortMembers(k))
}

func sortMembers(v Value) Value {
	if len(v.kids) == 0 {
		return v
	}
	out := v
	out.kids = make([]Value, len(v.kids))
	for i, e := range v.kids {
		out.kids[i] = sortMembers(e)
	}
	if v.kind == KindObject {
		type member struct{ k, v Value }
		ms := make([]member, 0, len(out.kids)/2)
		for i := 0; i < len(out.kids); i += 2 {
			ms = append(ms, member{out.kids[i], out.kids[i+1]})
		}
		sort.SliceStable(ms, func(i, j int) bool { return keyText(ms[i].k) < keyText(ms[j].k) })
		for i, m := range ms {
			out.kids[2*i], out.kids[2*i+1] = m.k, m.v
		}
	}
	return out
}

// keyText is an object key's text: a string's own, else its compact fastjson JSON.
func keyText(k Value) string {
	if k.Kind() == KindString {
		return k.Text()
	}
	w := NewWriter(StyleFastjson)
	w.Value(k)
	return string(w.Bytes())
}

// decodeGeneric decodes standard JSON with numbers as json.Number.
func decodeGeneric(t testing.TB, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

// sortedFieldKeys lists the keys of a field set, for messages.
func sortedFieldKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
