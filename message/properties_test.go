package message

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPropertiesWireParsing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		raw   string
		want  map[string]string
		order []string
	}{
		{"empty", "", map[string]string{}, nil},
		{"one pair, no trailing separator", "a\x01b", map[string]string{"a": "b"}, []string{"a"}},
		{"trailing separator", "a\x01b\x02", map[string]string{"a": "b"}, []string{"a"}},
		{"several pairs", "TAGS\x01t\x02KEYS\x01k1 k2\x02UNIQ_KEY\x01ABC",
			map[string]string{"TAGS": "t", "KEYS": "k1 k2", "UNIQ_KEY": "ABC"}, []string{"TAGS", "KEYS", "UNIQ_KEY"}},
		{"segments shorter than 3 skipped", "a\x01\x02\x01b\x02ab\x02c\x01d", map[string]string{"c": "d"}, []string{"c"}},
		{"split on the first 0x01", "a\x01b\x01c", map[string]string{"a": "b\x01c"}, []string{"a"}},
		{"empty name skipped", "\x01abc\x02x\x01y", map[string]string{"x": "y"}, []string{"x"}},
		{"empty value skipped", "abc\x01\x02x\x01y", map[string]string{"x": "y"}, []string{"x"}},
		{"no 0x01 skipped", "abcdef\x02x\x01y", map[string]string{"x": "y"}, []string{"x"}},
		{"duplicate: last wins, at its last position", "a\x011\x02b\x012\x02a\x013",
			map[string]string{"a": "3", "b": "2"}, []string{"b", "a"}},
		{"empty segments", "\x02\x02a\x01b\x02\x02", map[string]string{"a": "b"}, []string{"a"}},
		{"non-ASCII", "grüße\x01日本語", map[string]string{"grüße": "日本語"}, []string{"grüße"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := PropertiesFromWire(tc.raw)
			require.Equal(t, tc.raw, p.String(), "wire form kept")
			require.Equal(t, tc.want, p.Map())
			require.Equal(t, len(tc.want), p.Len())
			var order []string
			p.Range(func(n, v string) bool {
				order = append(order, n)
				require.Equal(t, tc.want[n], v)
				return true
			})
			require.Equal(t, tc.order, order)
			for n, v := range tc.want {
				got, ok := p.Get(n)
				require.True(t, ok, n)
				require.Equal(t, v, got)
				require.Equal(t, v, p.Value(n))
			}
			_, ok := p.Get("missing")
			require.False(t, ok)
			require.Equal(t, "", p.Value("missing"))

			// The first change switches to pairs, keeping every value and Range's order.
			q := PropertiesFromWire(tc.raw)
			q.Set("zz", "new")
			wantAfter := map[string]string{"zz": "new"}
			for n, v := range tc.want {
				wantAfter[n] = v
			}
			require.Equal(t, wantAfter, q.Map())
			var orderAfter []string
			q.Range(func(n, _ string) bool { orderAfter = append(orderAfter, n); return true })
			require.Equal(t, append(append([]string(nil), tc.order...), "zz"), orderAfter)
		})
	}
}

func TestPropertiesEditing(t *testing.T) {
	var p Properties
	require.Equal(t, "", p.String())
	require.Equal(t, 0, p.Len())
	p.Set("a", "1")
	p.Set("b", "2")
	p.Set("a", "3") // replaced in place
	require.Equal(t, "a\x013\x02b\x012\x02", p.String())
	require.Equal(t, "3", p.Value("a"))
	p.Delete("a")
	require.Equal(t, "b\x012\x02", p.String())
	p.Delete("missing")
	require.Equal(t, 1, p.Len())

	w := PropertiesFromWire("a\x011\x02b\x012")
	w.Delete("a")
	require.Equal(t, map[string]string{"b": "2"}, w.Map())
	require.Equal(t, "b\x012\x02", w.String())

	// Range stops when fn returns false.
	n := 0
	r := PropertiesFromWire("a\x011\x02b\x012\x02c\x013")
	r.Range(func(string, string) bool { n++; return n < 2 })
	require.Equal(t, 2, n)
	e := PropertiesOf(Property{"a", "1"}, Property{"b", "2"}, Property{"c", "3"})
	n = 0
	e.Range(func(string, string) bool { n++; return false })
	require.Equal(t, 1, n)

	// Message helpers.
	m := Message{Properties: PropertiesOf(Property{PropertyTags, "t"}, Property{PropertyKeys, " k1  k2 "})}
	require.Equal(t, "t", m.Tags())
	require.Equal(t, []string{"k1", "k2"}, m.Keys())
	require.Equal(t, "t", m.Property(PropertyTags))
	require.Nil(t, (&Message{}).Keys())
}

func TestPropertiesMapIsACopy(t *testing.T) {
	p := PropertiesFromWire("a\x011")
	m := p.Map()
	m["a"] = "changed"
	require.Equal(t, "1", p.Value("a"))
}

// TestPropertiesManyPairs covers the indexed path of Range (32 pairs or more), with
// duplicates, against the Java model, and a hostile wire form of thousands of distinct
// names (read in linear time).
func TestPropertiesManyPairs(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "k%d\x01v%d\x02", i%40, i)
	}
	b.WriteString("x\x01\x02\x01y\x02k3\x01last")
	raw := b.String()
	want, order := javaProperties(raw)
	p := PropertiesFromWire(raw)
	require.Equal(t, want, p.Map())
	var got []string
	p.Range(func(n, v string) bool { got = append(got, n); require.Equal(t, want[n], v); return true })
	require.Equal(t, order, got)
	require.Equal(t, "last", p.Value("k3"))
	require.Equal(t, "v99", p.Value("k19"))
	n := 0
	p.Range(func(string, string) bool { n++; return n < 5 })
	require.Equal(t, 5, n, "Range stops on the indexed path too")

	b.Reset()
	for i := 0; b.Len() < MaxPropertiesLength-16; i++ {
		fmt.Fprintf(&b, "%x\x01v\x02", i)
	}
	hostile := PropertiesFromWire(b.String())
	require.Equal(t, strings.Count(b.String(), "\x02"), hostile.Len())
}

// AddShared adds pairs after a decoded wire form without copying or parsing anything.
func TestPropertiesAddShared(t *testing.T) {
	shared := []Property{{"POP_CK", "a"}, {"1ST", "1"}, {"POP_CK", "b"}, {"1ST", "2"}}
	p := PropertiesFromWire("TAGS\x01x\x02POP_CK\x01old\x02")
	allocs := testing.AllocsPerRun(10, func() {
		q := PropertiesFromWire("TAGS\x01x\x02")
		q.AddShared(shared[0:2])
	})
	require.Zero(t, allocs)
	p.AddShared(shared[0:2])
	require.Equal(t, "a", p.Value("POP_CK"), "the added value wins")
	require.Equal(t, map[string]string{"TAGS": "x", "POP_CK": "a", "1ST": "1"}, p.Map())
	p.Set("TAGS", "y") // a change copies: the shared pairs stay as they were
	require.Equal(t, Property{"POP_CK", "a"}, shared[0])
	require.Equal(t, "y", p.Value("TAGS"))
	require.Equal(t, "a", p.Value("POP_CK"))

	var e Properties
	e.Set("k", "v")
	e.AddShared(shared[2:4])
	require.Equal(t, map[string]string{"k": "v", "POP_CK": "b", "1ST": "2"}, e.Map())
	w := PropertiesFromWire("")
	w.AddShared(shared[0:1])
	w.AddShared(shared[3:4])
	require.Equal(t, "POP_CK\x01a\x021ST\x012", w.String())
	require.Equal(t, Property{"1ST", "1"}, shared[1], "appending to a shared tail copies it")
}
