package remoting

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth bounds the nesting of a skipped value (an unknown header key).
const maxJSONDepth = 64

// jsonReader is a small JSON tokenizer over a header's text.
type jsonReader struct {
	s string
	i int
}

func (r *jsonReader) errorf(format string, args ...any) error {
	return fmt.Errorf("JSON header: "+format+" at offset %d", append(args, r.i)...)
}

// end checks that only whitespace follows the header object.
func (r *jsonReader) end() error {
	r.skipSpace()
	if r.i != len(r.s) {
		return r.errorf("unexpected data after the header object")
	}
	return nil
}

func (r *jsonReader) skipSpace() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *jsonReader) consume(c byte) bool {
	if r.i < len(r.s) && r.s[r.i] == c {
		r.i++
		return true
	}
	return false
}

func (r *jsonReader) consumeLiteral(lit string) bool {
	if strings.HasPrefix(r.s[r.i:], lit) {
		r.i += len(lit)
		return true
	}
	return false
}

// readString reads a quoted string. Without escapes it returns a substring of the input;
// bytes that are not valid UTF-8 become U+FFFD, as Java's UTF-8 decoder makes them. Raw
// control characters are accepted, as fastjson accepts them.
func (r *jsonReader) readString() (string, error) {
	if r.i >= len(r.s) || r.s[r.i] != '"' {
		return "", r.errorf("expected a string")
	}
	start := r.i + 1
	ascii := true
	for j := start; j < len(r.s); j++ {
		switch c := r.s[j]; {
		case c == '"':
			v := r.s[start:j]
			if !ascii && !utf8.ValidString(v) {
				v = strings.ToValidUTF8(v, "\uFFFD")
			}
			r.i = j + 1
			return v, nil
		case c == '\\':
			return r.readEscapedString(start, j)
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", r.errorf("unterminated string")
}

// readEscapedString finishes a string that contains escapes; esc is the index of the
// first backslash.
func (r *jsonReader) readEscapedString(start, esc int) (string, error) {
	buf := make([]byte, 0, esc-start+16)
	raw := start // start of the raw run not yet copied
	j := esc
	for j < len(r.s) {
		c := r.s[j]
		if c == '"' {
			buf = appendValidUTF8(buf, r.s[raw:j])
			r.i = j + 1
			return string(buf), nil
		}
		if c != '\\' {
			j++
			continue
		}
		buf = appendValidUTF8(buf, r.s[raw:j])
		if j+1 >= len(r.s) {
			break
		}
		switch e := r.s[j+1]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
			j += 2
		case 'b':
			buf = append(buf, '\b')
			j += 2
		case 'f':
			buf = append(buf, '\f')
			j += 2
		case 'n':
			buf = append(buf, '\n')
			j += 2
		case 'r':
			buf = append(buf, '\r')
			j += 2
		case 't':
			buf = append(buf, '\t')
			j += 2
		case 'u':
			r1, ok := hex4(r.s, j+2)
			if !ok {
				r.i = j
				return "", r.errorf(`invalid \u escape`)
			}
			j += 6
			if utf16.IsSurrogate(r1) {
				// A high surrogate followed by a low one is one character; any other
				// surrogate is replaced, as encoding/json does.
				if r2, ok := hex4(r.s, j+2); ok && j+1 < len(r.s) && r.s[j] == '\\' && r.s[j+1] == 'u' {
					if dec := utf16.DecodeRune(r1, r2); dec != utf8.RuneError {
						r1 = dec
						j += 6
					} else {
						r1 = utf8.RuneError
					}
				} else {
					r1 = utf8.RuneError
				}
			}
			buf = utf8.AppendRune(buf, r1)
		default:
			r.i = j
			return "", r.errorf("invalid escape '\\%c'", e)
		}
		raw = j
	}
	r.i = len(r.s)
	return "", r.errorf("unterminated string")
}

// appendValidUTF8 appends s with invalid bytes replaced by U+FFFD.
func appendValidUTF8(dst []byte, s string) []byte {
	if utf8.ValidString(s) {
		return append(dst, s...)
	}
	return append(dst, strings.ToValidUTF8(s, "\uFFFD")...)
}

// hex4 parses the 4 hex digits at s[i:i+4].
func hex4(s string, i int) (rune, bool) {
	if i < 0 || i+4 > len(s) {
		return 0, false
	}
	var v rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | rune(c)
	}
	return v, true
}

// skipNumber skips a JSON number.
func (r *jsonReader) skipNumber() error {
	start := r.i
	r.consume('-')
	if r.skipDigits() == 0 {
		r.i = start
		return r.errorf("invalid number")
	}
	if r.consume('.') && r.skipDigits() == 0 {
		r.i = start
		return r.errorf("invalid number")
	}
	if r.consume('e') || r.consume('E') {
		if !r.consume('+') {
			r.consume('-')
		}
		if r.skipDigits() == 0 {
			r.i = start
			return r.errorf("invalid number")
		}
	}
	return nil
}

func (r *jsonReader) skipDigits() int {
	start := r.i
	for r.i < len(r.s) && r.s[r.i] >= '0' && r.s[r.i] <= '9' {
		r.i++
	}
	return r.i - start
}

// skipValue skips any JSON value, nested at most maxJSONDepth deep.
func (r *jsonReader) skipValue(depth int) error {
	if depth > maxJSONDepth {
		return r.errorf("value nested deeper than %d", maxJSONDepth)
	}
	if r.i >= len(r.s) {
		return r.errorf("missing value")
	}
	switch c := r.s[r.i]; {
	case c == '"':
		_, err := r.readString()
		return err
	case c == '{':
		r.i++
		r.skipSpace()
		if r.consume('}') {
			return nil
		}
		for {
			r.skipSpace()
			if _, err := r.readString(); err != nil {
				return err
			}
			r.skipSpace()
			if !r.consume(':') {
				return r.errorf("expected ':'")
			}
			r.skipSpace()
			if err := r.skipValue(depth + 1); err != nil {
				return err
			}
			r.skipSpace()
			if r.consume(',') {
				continue
			}
			if r.consume('}') {
				return nil
			}
			return r.errorf("expected ',' or '}'")
		}
	case c == '[':
		r.i++
		r.skipSpace()
		if r.consume(']') {
			return nil
		}
		for {
			r.skipSpace()
			if err := r.skipValue(depth + 1); err != nil {
				return err
			}
			r.skipSpace()
			if r.consume(',') {
				continue
			}
			if r.consume(']') {
				return nil
			}
			return r.errorf("expected ',' or ']'")
		}
	case c == 't':
		if r.consumeLiteral("true") {
			return nil
		}
	case c == 'f':
		if r.consumeLiteral("false") {
			return nil
		}
	case c == 'n':
		if r.consumeLiteral("null") {
			return nil
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return r.skipNumber()
	}
	return r.errorf("invalid value")
}
