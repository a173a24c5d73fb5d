package message

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// pullExtra is what the pull service adds to every message.
var pullExtra = []Property{{PropertyMinOffset, "0"}, {PropertyMaxOffset, "1032"}}

// propsView is everything a reader can see of a message's properties.
type propsView struct {
	Wire  string
	Map   map[string]string
	Order []string // Range's names, in order
	Len   int
	Gets  map[string]string
}

func viewOf(p *Properties) propsView {
	v := propsView{Wire: p.String(), Map: p.Map(), Len: p.Len(), Gets: map[string]string{}}
	p.Range(func(n, _ string) bool { v.Order = append(v.Order, n); return true })
	names := v.Order
	if len(names) > 64 { // thousands of pairs (a hostile body): Get each 64th, Get is linear
		names = nil
		for i := 0; i < len(v.Order); i += len(v.Order) / 64 {
			names = append(names, v.Order[i])
		}
	}
	for _, n := range append(names, "ABSENT", PropertyMinOffset, PropertyWaitStoreMsgOK) {
		if val, ok := p.Get(n); ok {
			v.Gets[n] = val
		}
	}
	return v
}

// requireSameDecoding checks that DecodeOwned and DecodeLent, each on a copy of body,
// give what DecodeAllWith gives: same messages, same errors, same properties as any
// reader sees them; DecodeLent's messages all but their bodies also once their copy of
// body was overwritten, as a reused buffer is.
func requireSameDecoding(t *testing.T, d *Decoder, body []byte, extra ...Property) {
	t.Helper()
	want, werr := d.DecodeAllWith(body, extra...)
	got, gerr := d.DecodeOwned(bytes.Clone(body), extra...)
	requireSameMessages(t, want, werr, got, gerr, true)

	lentBody := bytes.Clone(body)
	lent, lerr := d.DecodeLent(lentBody, extra...)
	requireSameMessages(t, want, werr, lent, lerr, true)
	for i := range lentBody {
		lentBody[i] = ^lentBody[i] // the buffer reused for the next answer
	}
	requireSameMessages(t, want, werr, lent, lerr, false)
}

// requireSameMessages checks got against want, message by message, with their bodies
// when bodies is set.
func requireSameMessages(t *testing.T, want []*Ext, werr error, got []*Ext, gerr error, bodies bool) {
	t.Helper()
	require.Equal(t, fmt.Sprint(werr), fmt.Sprint(gerr), "errors")
	require.Len(t, got, len(want))
	for i := range want {
		w, g := fieldsOf(want[i]), fieldsOf(got[i])
		if !bodies {
			w.Body, g.Body = nil, nil
		}
		require.Equal(t, w, g, "message %d", i)
		require.Equal(t, viewOf(&want[i].Properties), viewOf(&got[i].Properties), "message %d properties", i)
		require.Equal(t, want[i].MsgID(), got[i].MsgID(), "message %d id", i)
	}
}

func TestDecodeOwnedMatchesDecodeAllWith(t *testing.T) {
	innerBody := func(compressed bool) []byte {
		inner := []*Message{
			{Flag: 1, Body: []byte("a"), Properties: PropertiesOf(Property{PropertyUniqKey, "U1"}, Property{PropertyMinOffset, "inner"})},
			{Flag: 2, Body: []byte("b")},
		}
		batch, err := EncodeBatch(inner)
		require.NoError(t, err)
		outer := testExt("T", "")
		outer.Body = batch
		outer.SysFlag = SysFlagInnerBatch | SysFlagNeedUnwrap
		outer.Properties = PropertiesOf(Property{PropertyWaitStoreMsgOK, "false"})
		if compressed {
			outer.Body = mustCompress(t, CompressionZlib, string(batch))
			outer.SysFlag |= CompressionFlag(CompressionZlib)
		}
		plain := testExt("T", "plain")
		return append(mustRecord(t, plain), mustRecord(t, outer)...)
	}
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"typical pull", pullBody(t, 40, 128, false, 0)},
		{"compressed bodies", pullBody(t, 5, 300, true, CompressionZstd)},
		{"inner batch", innerBody(false)},
		{"compressed inner batch", innerBody(true)},
		{"raw properties end with 0x02", func() []byte {
			m := testExt("T", "x")
			m.Properties = PropertiesFromWire("TAGS\x01t\x02MAX_OFFSET\x01old\x02")
			return mustRecord(t, m)
		}()},
		{"no properties, several topics", func() []byte {
			var b []byte
			for _, topic := range []string{"A", "A", "B", "", "A"} {
				b = append(b, mustRecord(t, testExt(topic, "x"))...)
			}
			return b
		}()},
		{"bad record after good ones", append(pullBody(t, 3, 10, false, 0), 0, 0, 0, 9)},
		{"empty", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d Decoder
			requireSameDecoding(t, &d, tc.body, pullExtra...)
			requireSameDecoding(t, &d, tc.body)
		})
	}
}

// TestDecodeOwnedLayout: topics and properties point into the body, and every message
// shares one tail of extra properties; changing one message's properties changes no
// other.
func TestDecodeOwnedLayout(t *testing.T) {
	body := pullBody(t, 40, 100, false, 0)
	var d Decoder
	msgs, err := d.DecodeOwned(body, pullExtra...)
	require.NoError(t, err)
	require.Len(t, msgs, 40)
	for i, m := range msgs {
		require.True(t, within(unsafe.Slice(unsafe.StringData(m.Topic), len(m.Topic)), body), "topic %d in the body", i)
		raw := m.Properties.raw
		require.True(t, within(unsafe.Slice(unsafe.StringData(raw), len(raw)), body), "properties %d in the body", i)
		require.Same(t, &msgs[0].Properties.pairs[0], &m.Properties.pairs[0], "one shared tail")
	}
	msgs[0].Properties.Set(PropertyMaxOffset, "7")
	msgs[0].Properties.Set("NEW", "v")
	require.Equal(t, "7", msgs[0].Properties.Value(PropertyMaxOffset))
	require.Equal(t, "1032", msgs[1].Properties.Value(PropertyMaxOffset), "the shared tail is not changed in place")
	require.Empty(t, msgs[1].Properties.Value("NEW"))
	pullExtra[1].Value = "changed by the caller"
	defer func() { pullExtra[1].Value = "1032" }()
	require.Equal(t, "1032", msgs[1].Properties.Value(PropertyMaxOffset), "the tail is a copy of extra")
}

// TestDecodeLentLayout: bodies point into the body, topics and properties into one
// copy outside it, and every message shares one tail of extra properties.
func TestDecodeLentLayout(t *testing.T) {
	body := pullBody(t, 40, 100, false, 0)
	var d Decoder
	msgs, err := d.DecodeLent(body, pullExtra...)
	require.NoError(t, err)
	require.Len(t, msgs, 40)
	for i, m := range msgs {
		require.True(t, within(m.Body, body), "body %d in the body", i)
		require.False(t, overlaps(unsafe.Slice(unsafe.StringData(m.Topic), len(m.Topic)), body), "topic %d out of the body", i)
		raw := m.Properties.raw
		require.False(t, overlaps(unsafe.Slice(unsafe.StringData(raw), len(raw)), body), "properties %d out of the body", i)
		require.Same(t, &msgs[0].Properties.pairs[0], &m.Properties.pairs[0], "one shared tail")
		require.Equal(t, unsafe.StringData(msgs[0].Topic), unsafe.StringData(m.Topic), "one copy of a run's topic")
	}
}

// DecodeOwned decodes a 32-message pull in three allocations, DecodeLent in four (its
// copy of the strings), and both refuse an extra property with a separator.
func TestDecodePullAllocations(t *testing.T) {
	body := pullBody(t, 32, 1024, false, 0)
	for _, tc := range []struct {
		name   string
		decode func(*Decoder, []byte, ...Property) ([]*Ext, error)
		allocs float64
	}{
		{"owned", (*Decoder).DecodeOwned, 3},
		{"lent", (*Decoder).DecodeLent, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d Decoder
			// Made once: through a func value the variadic slice would escape per call.
			extra := []Property{{PropertyMinOffset, "0"}, {PropertyMaxOffset, "1032"}}
			allocs := testing.AllocsPerRun(50, func() {
				msgs, err := tc.decode(&d, body, extra...)
				if err != nil || len(msgs) != 32 {
					panic(fmt.Sprint("decode failed: ", err))
				}
			})
			require.LessOrEqual(t, allocs, tc.allocs)
			_, err := tc.decode(&d, mustRecord(t, testExt("T", "x")), Property{"MIN_OFFSET", "1\x022"})
			require.ErrorContains(t, err, "contains a separator byte")
		})
	}
}

// TestPropertiesTail: a wire form with a tail reads as the wire form with the tail's
// pairs appended, whatever the duplicates, also past the many-pairs threshold.
func TestPropertiesTail(t *testing.T) {
	many := ""
	for i := range smallProperties + 3 {
		many += fmt.Sprintf("K%d\x01v%d\x02", i, i)
	}
	for _, tc := range []struct {
		name string
		raw  string
		tail []Property
	}{
		{"empty wire form", "", []Property{{"A", "1"}}},
		{"no tail", "A\x01x", nil},
		{"tail overrides", "A\x01x\x02B\x01y", []Property{{"A", "1"}}},
		{"duplicates in the tail", "B\x01y\x02", []Property{{"A", "1"}, {"A", "2"}}},
		{"wire form with duplicates", "A\x01x\x02A\x01z\x02C\x01c", []Property{{"B", "1"}}},
		{"many pairs", many, []Property{{"K3", "tail"}, {"Z", "z"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withTail := Properties{raw: tc.raw, pairs: tc.tail}
			var sb bytes.Buffer
			sb.WriteString(tc.raw)
			for _, kv := range tc.tail {
				if sb.Len() > 0 && sb.Bytes()[sb.Len()-1] != PropertySeparator {
					sb.WriteByte(PropertySeparator)
				}
				sb.WriteString(kv.Name + "\x01" + kv.Value)
			}
			joined := PropertiesFromWire(sb.String())
			require.Equal(t, viewOf(&joined), viewOf(&withTail))
			rec, err := AppendStoreRecord(nil, &Ext{Message: Message{Topic: "T", Properties: withTail}})
			require.NoError(t, err)
			back, err := DecodeAll(rec)
			require.NoError(t, err)
			require.Equal(t, joined.String(), back[0].Properties.String(), "encoded with its tail")
		})
	}
}
