package message

import "strings"

// Separators of the properties wire form: name 0x01 value, pairs separated by 0x02.
const (
	NameValueSeparator = '\x01'
	PropertySeparator  = '\x02'
)

// Property is one name/value pair.
type Property struct {
	Name  string // the property's name, e.g. TAGS
	Value string // its value
}

// Properties holds a message's properties. A decoded message keeps them in their wire
// form and reads them by scanning it, so nothing is parsed or allocated for properties
// nobody asks for; the first change turns them into a list of pairs. The zero value is
// empty and ready to use. Properties are not safe for concurrent modification.
//
// Reading follows Java's MessageDecoder.string2messageProperties: pairs are split on
// 0x02, a pair on its first 0x01, and pairs with an empty name or an empty value are
// skipped. When a name occurs twice, the last one wins.
type Properties struct {
	raw string // wire form; used while edited is false
	// pairs are the properties once they have been changed (edited). Before that, pairs
	// are a tail that follows the wire form, as if appended to it: the extra properties
	// a Decoder's DecodeOwned gives every message of a body, shared by them all and
	// never changed in place (the first change copies them).
	pairs  []Property
	edited bool
}

// PropertiesFromWire returns properties backed by their wire form, without parsing it.
func PropertiesFromWire(raw string) Properties { return Properties{raw: raw} }

// PropertiesOf returns properties holding the given name/value pairs, in order.
func PropertiesOf(pairs ...Property) Properties {
	p := Properties{}
	for _, kv := range pairs {
		p.Set(kv.Name, kv.Value)
	}
	return p
}

// Get returns the value of the named property and whether it is present.
func (p *Properties) Get(name string) (string, bool) {
	if p.edited {
		for i := len(p.pairs) - 1; i >= 0; i-- {
			if p.pairs[i].Name == name {
				return p.pairs[i].Value, true
			}
		}
		return "", false
	}
	for i := len(p.pairs) - 1; i >= 0; i-- { // the tail comes after the wire form
		if p.pairs[i].Name == name {
			return p.pairs[i].Value, true
		}
	}
	if !strings.Contains(p.raw, name) { // a quick search rules most absent names out
		return "", false
	}
	value, found := "", false
	p.scan(func(n, v string) bool {
		if n == name {
			value, found = v, true
		}
		return true
	})
	return value, found
}

// Value returns the named property, or "" when it is absent.
func (p *Properties) Value(name string) string {
	v, _ := p.Get(name)
	return v
}

// Set sets the named property, replacing any value it had. Names and values must not
// contain the separators 0x01 and 0x02; such a value would not survive the wire.
func (p *Properties) Set(name, value string) {
	p.edit()
	for i := range p.pairs {
		if p.pairs[i].Name == name {
			p.pairs[i].Value = value
			return
		}
	}
	p.pairs = append(p.pairs, Property{Name: name, Value: value})
}

// AddShared adds pairs after the properties the way DecodeAllWith adds its extra
// properties: a decoded wire form is not parsed, and pairs is kept as it is, not
// copied, so adding them allocates nothing. pairs must not change afterwards (a later
// change of the properties copies them first); a name already present takes the new
// value, as with Set. A consumer uses it to give each message of a batch its own
// properties (the POP path's ack handles) out of one slice.
func (p *Properties) AddShared(pairs []Property) {
	switch {
	case p.edited:
		for _, kv := range pairs {
			p.Set(kv.Name, kv.Value)
		}
	case len(p.pairs) == 0:
		p.pairs = pairs[:len(pairs):len(pairs)]
	default:
		p.pairs = append(p.pairs[:len(p.pairs):len(p.pairs)], pairs...)
	}
}

// Delete removes the named property.
func (p *Properties) Delete(name string) {
	p.edit()
	kept := p.pairs[:0]
	for _, kv := range p.pairs {
		if kv.Name != name {
			kept = append(kept, kv)
		}
	}
	p.pairs = kept
}

// Len returns the number of distinct properties.
func (p *Properties) Len() int {
	n := 0
	p.Range(func(string, string) bool { n++; return true })
	return n
}

// Range calls fn for each property in wire order until fn returns false. A name that
// occurs twice in a decoded wire form is reported once, at its last position.
func (p *Properties) Range(fn func(name, value string) bool) {
	if p.edited {
		for _, kv := range p.pairs {
			if !fn(kv.Name, kv.Value) {
				return
			}
		}
		return
	}
	if strings.Count(p.raw, "\x02") < smallProperties {
		// Few pairs: look for a later duplicate of each, without allocating.
		more := true
		scanWire(p.raw, func(n, v, rest string) bool {
			if hasName(rest, n) || tailHas(p.pairs, n) {
				return true // an earlier duplicate: the last occurrence is reported
			}
			more = fn(n, v)
			return more
		})
		for i, kv := range p.pairs {
			if !more {
				return
			}
			if !tailHas(p.pairs[i+1:], kv.Name) {
				more = fn(kv.Name, kv.Value)
			}
		}
		return
	}
	// Many pairs (a hostile peer can send thousands): index the last occurrence of each
	// name, so that reading stays linear.
	last := make(map[string]int)
	i := 0
	scanWire(p.raw, func(n, _, _ string) bool { last[n] = i; i++; return true })
	for _, kv := range p.pairs {
		last[kv.Name] = i
		i++
	}
	i = 0
	more := true
	scanWire(p.raw, func(n, v, _ string) bool {
		i++
		if last[n] != i-1 {
			return true // an earlier duplicate: the last occurrence is reported
		}
		more = fn(n, v)
		return more
	})
	for _, kv := range p.pairs {
		i++
		if !more {
			return
		}
		if last[kv.Name] == i-1 {
			more = fn(kv.Name, kv.Value)
		}
	}
}

// tailHas reports whether a tail holds a property named name.
func tailHas(tail []Property, name string) bool {
	for _, kv := range tail {
		if kv.Name == name {
			return true
		}
	}
	return false
}

// smallProperties is the number of pairs below which Range finds duplicates by scanning
// the rest of the wire form for each pair rather than by building an index.
const smallProperties = 32

// Map returns a new map holding every property.
func (p *Properties) Map() map[string]string {
	m := make(map[string]string)
	p.Range(func(n, v string) bool { m[n] = v; return true })
	return m
}

// String returns the wire form: every pair as name 0x01 value 0x02. A decoded wire form
// is returned as it was read, with the pairs DecodeAllWith or DecodeOwned added after
// it.
func (p *Properties) String() string {
	if !p.edited && len(p.pairs) == 0 {
		return p.raw
	}
	var b strings.Builder
	b.Grow(p.wireLen())
	if !p.edited {
		b.WriteString(p.raw)
		writeTail(&b, p.raw != "" && p.raw[len(p.raw)-1] != PropertySeparator, "", p.pairs)
		return b.String()
	}
	for _, kv := range p.pairs {
		b.WriteString(kv.Name)
		b.WriteByte(NameValueSeparator)
		b.WriteString(kv.Value)
		b.WriteByte(PropertySeparator)
	}
	return b.String()
}

// wireLen returns the length of the wire form String returns.
func (p *Properties) wireLen() int {
	if !p.edited {
		return joinedLen(p.raw, "", p.pairs)
	}
	n := 0
	for _, kv := range p.pairs {
		n += len(kv.Name) + len(kv.Value) + 2
	}
	return n
}

// edit switches from the wire form to the list of pairs, in the order Range reports
// them.
func (p *Properties) edit() {
	if p.edited {
		return
	}
	var pairs []Property
	p.Range(func(n, v string) bool {
		pairs = append(pairs, Property{Name: n, Value: v})
		return true
	})
	p.pairs, p.raw, p.edited = pairs, "", true
}

// scan calls fn for every well-formed pair of the wire form, in order.
func (p *Properties) scan(fn func(name, value string) bool) {
	scanWire(p.raw, func(n, v, _ string) bool { return fn(n, v) })
}

// scanWire calls fn for every well-formed pair of s, in order, with the part of s after
// the pair.
func scanWire(s string, fn func(name, value, rest string) bool) {
	for len(s) > 0 {
		seg := s
		if i := strings.IndexByte(s, PropertySeparator); i >= 0 {
			seg, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if len(seg) < 3 {
			continue
		}
		k := strings.IndexByte(seg, NameValueSeparator)
		if k <= 0 || k >= len(seg)-1 {
			continue
		}
		if !fn(seg[:k], seg[k+1:], s) {
			return
		}
	}
}

// hasName reports whether the wire form s holds a well-formed pair named name.
func hasName(s, name string) bool {
	found := false
	scanWire(s, func(n, _, _ string) bool {
		found = n == name
		return !found
	})
	return found
}
