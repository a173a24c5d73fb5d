package remoting

import (
	"strconv"
	"unicode/utf8"
)

// The JSON header (serialize type 0).
//
// We write the keys code, language, version, opaque, flag, remark and extFields, in that
// order (rocketmq-client-go's order; Java's fastjson accepts any order). remark is left out
// when it is empty: Java reads an absent remark as null, which is what an empty remark
// means. extFields is left out when Command.ExtFields is nil and written as {} when it is
// empty but not nil, so a decoded header keeps the distinction Java makes between "no
// custom header" (absent) and "custom header with every field null" ({}). A language Java
// does not name is written as "UNKNOWN", which Java reads as null and we read as
// LanguageUnknown. We never write serializeTypeCurrentRPC: Java overwrites it from the
// frame's serialize type when it decodes.
//
// Non-ASCII text is written as raw UTF-8, as fastjson does; control characters, '"' and
// '\' are escaped, and bytes that are not valid UTF-8 are written as \ufffd.

// appendJSONHeader appends c's JSON header to dst.
func appendJSONHeader(dst []byte, c *Command) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(c.Code), 10)
	dst = append(dst, `,"language":"`...)
	dst = append(dst, c.Language.String()...)
	dst = append(dst, `","version":`...)
	dst = strconv.AppendInt(dst, int64(c.Version), 10)
	dst = append(dst, `,"opaque":`...)
	dst = strconv.AppendInt(dst, int64(c.Opaque), 10)
	dst = append(dst, `,"flag":`...)
	dst = strconv.AppendInt(dst, int64(c.Flag), 10)
	if c.Remark != "" {
		dst = append(dst, `,"remark":`...)
		dst = appendJSONString(dst, c.Remark)
	}
	if c.ExtFields != nil {
		dst = append(dst, `,"extFields":{`...)
		for i, f := range c.ExtFields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, f.Key)
			dst = append(dst, ':')
			dst = appendJSONString(dst, f.Value)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// jsonHeaderSizeHint estimates the size of c's JSON header, to grow a buffer once.
func jsonHeaderSizeHint(c *Command) int {
	n := 96 + len(c.Remark)
	for _, f := range c.ExtFields {
		n += len(f.Key) + len(f.Value) + 6
	}
	return n
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a quoted JSON string.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// decodeJSONHeader decodes a JSON header into c, whose fields must be zero.
//
// Keys may come in any order; unknown keys (serializeTypeCurrentRPC, or anything a newer
// peer adds) are skipped whatever their value; a repeated key takes its last value, as
// with fastjson. An absent key leaves its field zero, which for language is JAVA, Java's
// default. code, version, opaque and flag must be integers in int32 range or null; language
// a string (an unknown name gives LanguageUnknown) or null (LanguageUnknown); remark a
// string or null. extFields is an object or null; its entries keep their wire order, a
// repeated key included (Fields.Get returns the last, as fastjson's map keeps the last
// value), so our encoder writes back what was read. Its values are strings, but
// numbers, true and false are accepted and kept as their literal text (fastjson's
// String codec does the same), and a null value drops the entry (Java's map holds null,
// which no code reads as a value).
//
// Unescaped strings are substrings of s, so a decoded header costs one allocation for
// its text plus the ext-field list.
func decodeJSONHeader(s string, c *Command) error {
	r := jsonReader{s: s}
	r.skipSpace()
	if !r.consume('{') {
		return r.errorf("expected '{'")
	}
	r.skipSpace()
	if r.consume('}') {
		return r.end()
	}
	for {
		r.skipSpace()
		key, err := r.readString()
		if err != nil {
			return err
		}
		r.skipSpace()
		if !r.consume(':') {
			return r.errorf("expected ':' after key %q", key)
		}
		r.skipSpace()
		switch key {
		case "code":
			c.Code, err = r.readInt32(key)
		case "language":
			c.Language, err = r.readLanguage()
		case "version":
			c.Version, err = r.readInt32(key)
		case "opaque":
			c.Opaque, err = r.readInt32(key)
		case "flag":
			c.Flag, err = r.readInt32(key)
		case "remark":
			c.Remark, err = r.readNullableString(key)
		case "extFields":
			c.ExtFields, err = r.readExtFields()
		default:
			err = r.skipValue(0)
		}
		if err != nil {
			return err
		}
		r.skipSpace()
		if r.consume(',') {
			continue
		}
		if r.consume('}') {
			return r.end()
		}
		return r.errorf("expected ',' or '}' after the value of %q", key)
	}
}

// readExtFields reads the extFields object (or null) in wire order.
func (r *jsonReader) readExtFields() (Fields, error) {
	if r.consumeLiteral("null") {
		return nil, nil
	}
	if !r.consume('{') {
		return nil, r.errorf("extFields: expected an object")
	}
	r.skipSpace()
	if r.consume('}') {
		return Fields{}, nil
	}
	// Parse into a stack buffer, then copy into an exactly sized list.
	var stack [32]Field
	fields := stack[:0]
	for {
		r.skipSpace()
		key, err := r.readString()
		if err != nil {
			return nil, err
		}
		r.skipSpace()
		if !r.consume(':') {
			return nil, r.errorf("extFields: expected ':' after key %q", key)
		}
		r.skipSpace()
		value, isNull, err := r.readExtValue(key)
		if err != nil {
			return nil, err
		}
		if !isNull {
			fields = append(fields, Field{Key: key, Value: value})
		}
		r.skipSpace()
		if r.consume(',') {
			continue
		}
		if r.consume('}') {
			break
		}
		return nil, r.errorf("extFields: expected ',' or '}' after the value of %q", key)
	}
	out := make(Fields, len(fields))
	copy(out, fields)
	return out, nil
}

// readExtValue reads one extFields value: a string, a number or boolean (kept as its
// text), or null.
func (r *jsonReader) readExtValue(key string) (value string, isNull bool, err error) {
	if r.i >= len(r.s) {
		return "", false, r.errorf("extFields: missing value of %q", key)
	}
	switch c := r.s[r.i]; {
	case c == '"':
		v, err := r.readString()
		return v, false, err
	case c == 'n':
		if r.consumeLiteral("null") {
			return "", true, nil
		}
	case c == 't':
		if r.consumeLiteral("true") {
			return "true", false, nil
		}
	case c == 'f':
		if r.consumeLiteral("false") {
			return "false", false, nil
		}
	case c == '-' || (c >= '0' && c <= '9'):
		start := r.i
		if err := r.skipNumber(); err != nil {
			return "", false, err
		}
		return r.s[start:r.i], false, nil
	}
	return "", false, r.errorf("extFields: value of %q must be a string", key)
}

// readInt32 reads an integer in int32 range, or null as 0.
func (r *jsonReader) readInt32(key string) (int32, error) {
	if r.consumeLiteral("null") {
		return 0, nil
	}
	start := r.i
	if r.i < len(r.s) && r.s[r.i] == '-' {
		r.i++
	}
	digits := r.i
	for r.i < len(r.s) && r.s[r.i] >= '0' && r.s[r.i] <= '9' {
		r.i++
	}
	if r.i == digits {
		r.i = start
		return 0, r.errorf("%q: expected an integer", key)
	}
	if r.i < len(r.s) && (r.s[r.i] == '.' || r.s[r.i] == 'e' || r.s[r.i] == 'E') {
		r.i = start
		return 0, r.errorf("%q: expected an integer, got a fraction or exponent", key)
	}
	text := r.s[start:r.i]
	v, err := strconv.ParseInt(text, 10, 32)
	if err != nil {
		r.i = start
		return 0, r.errorf("%q: %.24s is not an int32", key, text)
	}
	return int32(v), nil
}

// readLanguage reads a language name, or null as LanguageUnknown.
func (r *jsonReader) readLanguage() (LanguageCode, error) {
	if r.consumeLiteral("null") {
		return LanguageUnknown, nil
	}
	if r.i >= len(r.s) || r.s[r.i] != '"' {
		return 0, r.errorf(`"language": expected a string`)
	}
	name, err := r.readString()
	if err != nil {
		return 0, err
	}
	return LanguageByName(name), nil
}

// readNullableString reads a string, or null as "".
func (r *jsonReader) readNullableString(key string) (string, error) {
	if r.consumeLiteral("null") {
		return "", nil
	}
	if r.i >= len(r.s) || r.s[r.i] != '"' {
		return "", r.errorf("%q: expected a string", key)
	}
	return r.readString()
}
