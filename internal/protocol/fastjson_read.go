package protocol

import (
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits of Parse.
const (
	// MaxDepth is the deepest nesting of arrays and objects (object keys included)
	// Parse accepts.
	MaxDepth = 64
	// MaxNumberLen is the longest number literal Parse accepts. Java's longs need 20
	// characters and its doubles 24; anything longer is refused before it is read.
	MaxNumberLen = 64
	// MaxInputLen is the largest input Parse accepts; offsets fit in an int32.
	MaxInputLen = math.MaxInt32
	// MaxValues is the largest number of values (keys included) Parse builds. A tree
	// costs about 48 bytes per value, so this bounds a parse near 100 MiB whatever the
	// input's size; the largest bodies a client meets hold a few hundred thousand.
	MaxValues = 1 << 21
)

// Parse parses one JSON value: standard JSON plus fastjson's object keys (unquoted
// numbers, objects and arrays). Only whitespace may follow the value. The returned tree
// shares memory with one copy of data, not with data itself. Parsing is bounded by
// MaxDepth, MaxNumberLen and MaxValues.
func Parse(data []byte) (Value, error) {
	if len(data) > MaxInputLen {
		return Value{}, &JSONError{Offset: 0, Msg: "input of " + strconv.Itoa(len(data)) + " bytes is too large"}
	}
	p := parser{data: string(data)}
	v, err := p.value()
	if err != nil {
		return Value{}, err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return Value{}, p.errorf("unexpected " + p.describe() + " after the value")
	}
	return v, nil
}

// parser is a recursive-descent parser. Children of the containers being parsed are
// collected on one shared stack and copied out, exactly sized, when their container
// ends, so each container costs one allocation.
type parser struct {
	data   string
	pos    int
	depth  int
	values int // values built so far, against MaxValues
	stack  []Value
}

func (p *parser) errorf(msg string) error { return &JSONError{Offset: p.pos, Msg: msg} }

// describe names the byte at pos for an error message.
func (p *parser) describe() string {
	if p.pos >= len(p.data) {
		return "end of input"
	}
	c := p.data[p.pos]
	if c >= 0x20 && c < 0x7f {
		return "character " + strconv.QuoteRune(rune(c))
	}
	return "byte 0x" + strconv.FormatUint(uint64(c), 16)
}

// count counts one more value against MaxValues.
func (p *parser) count() error {
	p.values++
	if p.values > MaxValues {
		return p.errorf("more than " + strconv.Itoa(MaxValues) + " values")
	}
	return nil
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() (Value, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return Value{}, p.errorf("unexpected end of input, expected a value")
	}
	if err := p.count(); err != nil {
		return Value{}, err
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.container(KindObject, '}')
	case c == '[':
		return p.container(KindArray, ']')
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true", Value{kind: KindBool, b: true})
	case c == 'f':
		return p.literal("false", Value{kind: KindBool})
	case c == 'n':
		return p.literal("null", Value{kind: KindNull})
	}
	return Value{}, p.errorf("unexpected " + p.describe() + ", expected a value")
}

func (p *parser) literal(word string, v Value) (Value, error) {
	end := p.pos + len(word)
	if end > len(p.data) || p.data[p.pos:end] != word {
		return Value{}, p.errorf("invalid literal, expected " + word)
	}
	v.off = int32(p.pos)
	p.pos = end
	return v, nil
}

// key parses an object key: a string, or as fastjson writes non-string keys, a number,
// an object or an array.
func (p *parser) key() (Value, error) {
	p.skipSpace()
	if err := p.count(); err != nil {
		return Value{}, err
	}
	if p.pos < len(p.data) {
		switch c := p.data[p.pos]; {
		case c == '"':
			return p.str()
		case c == '-' || (c >= '0' && c <= '9'):
			return p.number()
		case c == '{':
			return p.container(KindObject, '}')
		case c == '[':
			return p.container(KindArray, ']')
		}
	}
	return Value{}, p.errorf("unexpected " + p.describe() + ", expected an object key")
}

// container parses an object or an array; p.pos is at its opening bracket.
func (p *parser) container(kind Kind, closing byte) (Value, error) {
	if p.depth >= MaxDepth {
		return Value{}, p.errorf("nesting deeper than " + strconv.Itoa(MaxDepth) + " levels")
	}
	p.depth++
	v := Value{kind: kind, off: int32(p.pos)}
	p.pos++
	base := len(p.stack)
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == closing {
		p.pos++
		p.depth--
		return v, nil
	}
	for {
		if kind == KindObject {
			k, err := p.key()
			if err != nil {
				return Value{}, err
			}
			p.stack = append(p.stack, k)
			p.skipSpace()
			if p.pos >= len(p.data) || p.data[p.pos] != ':' {
				return Value{}, p.errorf("unexpected " + p.describe() + ", expected ':' after an object key")
			}
			p.pos++
		}
		e, err := p.value()
		if err != nil {
			return Value{}, err
		}
		p.stack = append(p.stack, e)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return Value{}, p.errorf("unexpected end of input, expected ',' or '" + string(closing) + "'")
		}
		c := p.data[p.pos]
		p.pos++
		if c == closing {
			break
		}
		if c != ',' {
			p.pos--
			return Value{}, p.errorf("unexpected " + p.describe() + ", expected ',' or '" + string(closing) + "'")
		}
	}
	v.kids = make([]Value, len(p.stack)-base)
	copy(v.kids, p.stack[base:])
	clear(p.stack[base:]) // drop references held by the shared stack
	p.stack = p.stack[:base]
	p.depth--
	return v, nil
}

// number checks the JSON number grammar and keeps the literal.
func (p *parser) number() (Value, error) {
	start := p.pos
	i := p.pos
	d := p.data
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		p.pos = i
		return Value{}, p.errorf("invalid number: expected a digit")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.pos = i
			return Value{}, p.errorf("invalid number: expected a digit after '.'")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.pos = i
			return Value{}, p.errorf("invalid number: expected a digit in the exponent")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i-start > MaxNumberLen {
		return Value{}, p.errorf("number of " + strconv.Itoa(i-start) + " characters is too long (limit " +
			strconv.Itoa(MaxNumberLen) + ")")
	}
	p.pos = i
	return Value{kind: KindNumber, off: int32(start), s: d[start:i]}, nil
}

// str parses a string; p.pos is at its opening quote. A string without escapes is a
// substring of the input and costs nothing.
func (p *parser) str() (Value, error) {
	start := p.pos
	i := p.pos + 1
	d := p.data
	for i < len(d) {
		c := d[i]
		if c == '"' {
			p.pos = i + 1
			return Value{kind: KindString, off: int32(start), s: d[start+1 : i]}, nil
		}
		if c == '\\' {
			return p.strEscaped(start, i)
		}
		if c < 0x20 {
			p.pos = i
			return Value{}, p.errorf("control character in a string")
		}
		i++
	}
	p.pos = i
	return Value{}, p.errorf("unexpected end of input in a string")
}

// strEscaped finishes a string that has an escape at i.
func (p *parser) strEscaped(start, i int) (Value, error) {
	d := p.data
	buf := make([]byte, 0, i-start+16)
	buf = append(buf, d[start+1:i]...)
	for i < len(d) {
		c := d[i]
		switch {
		case c == '"':
			p.pos = i + 1
			return Value{kind: KindString, off: int32(start), s: string(buf)}, nil
		case c < 0x20:
			p.pos = i
			return Value{}, p.errorf("control character in a string")
		case c != '\\':
			buf = append(buf, c)
			i++
			continue
		}
		if i+1 >= len(d) {
			break
		}
		switch e := d[i+1]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(d, i+2)
			if !ok {
				p.pos = i
				return Value{}, p.errorf("invalid \\u escape")
			}
			i += 6
			if utf16.IsSurrogate(r) {
				// A high surrogate followed by an escaped low one is one character;
				// anything else is an unpaired surrogate, read as U+FFFD.
				if i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
					if r2, ok := hex4(d, i+2); ok {
						if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
							buf = utf8.AppendRune(buf, pair)
							i += 6
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			buf = utf8.AppendRune(buf, r)
			continue
		default:
			p.pos = i
			return Value{}, p.errorf("invalid escape " + strconv.Quote(d[i:i+2]))
		}
		i += 2
	}
	p.pos = len(d)
	return Value{}, p.errorf("unexpected end of input in a string")
}

// hex4 reads four hex digits at i.
func hex4(d string, i int) (rune, bool) {
	if i < 0 || i+4 > len(d) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(d[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
