package protocol

import (
	"strconv"

	"github.com/rmqpush/rmqpush/remoting"
)

// Optional is a header value Java may leave null, for fields whose null and zero mean
// different things (for example setZeroIfNotFound, where null means true).
type Optional[T any] struct {
	Value T
	Set   bool
}

// Some returns an Optional holding v.
func Some[T any](v T) Optional[T] { return Optional[T]{Value: v, Set: true} }

// HeaderError reports an ext field that a header's Decode could not accept: a required
// field that is missing, or a value that does not parse.
type HeaderError struct {
	Header  string // the header type, e.g. "PullMessageResponse"
	Field   string // the ext-field name, e.g. "nextBeginOffset"
	Value   string // the value found (empty when Missing)
	Missing bool   // a required field is absent
	Want    string // what the value should have been, e.g. "int64"
}

// Error describes the field and the value.
func (e *HeaderError) Error() string {
	if e.Missing {
		return "protocol: " + e.Header + ": required field " + strconv.Quote(e.Field) + " is missing"
	}
	return "protocol: " + e.Header + ": field " + strconv.Quote(e.Field) + ": " +
		strconv.Quote(e.Value) + " is not a valid " + e.Want
}

// fieldDecoder reads typed values from extFields, keeping the first error. It is used
// by value on the stack, so decoding allocates only when it fails.
type fieldDecoder struct {
	fields remoting.Fields
	header string
	err    error
	// alt, when set, names a second key to read when a key is absent (the long names
	// behind SEND_MESSAGE_V2's short ones), or returns "".
	alt func(key string) string
}

func (d *fieldDecoder) fail(field, value string, missing bool, want string) {
	if d.err == nil {
		d.err = &HeaderError{Header: d.header, Field: field, Value: value, Missing: missing, Want: want}
	}
}

// lookup returns the value of key (or of its alternative name) and the name it was
// found under; a required key that is absent is an error.
func (d *fieldDecoder) lookup(key string, required bool) (value, name string, ok bool) {
	if v, ok := d.fields.Get(key); ok {
		return v, key, true
	}
	if d.alt != nil {
		if a := d.alt(key); a != "" {
			if v, ok := d.fields.Get(a); ok {
				return v, a, true
			}
			key += "/" + a
		}
	}
	if required {
		d.fail(key, "", true, "")
	}
	return "", key, false
}

func (d *fieldDecoder) str(key string, required bool) string {
	v, _, _ := d.lookup(key, required)
	return v
}

func (d *fieldDecoder) int64(key string, required bool) int64 {
	v, name, ok := d.lookup(key, required)
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		d.fail(name, v, false, "int64")
	}
	return n
}

func (d *fieldDecoder) int32(key string, required bool) int32 {
	v, name, ok := d.lookup(key, required)
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		d.fail(name, v, false, "int32")
	}
	return int32(n)
}

// boolean accepts "true" and "false" in any case. Java's Boolean.parseBoolean reads
// anything else as false; a value that is neither is reported instead.
func (d *fieldDecoder) boolean(key string, required bool) bool {
	v, name, ok := d.lookup(key, required)
	if !ok {
		return false
	}
	b, valid := parseJavaBool(v)
	if !valid {
		d.fail(name, v, false, "boolean")
	}
	return b
}

func (d *fieldDecoder) has(key string) bool {
	_, _, ok := d.lookup(key, false)
	return ok
}

func (d *fieldDecoder) optInt32(key string) Optional[int32] {
	if !d.has(key) {
		return Optional[int32]{}
	}
	return Some(d.int32(key, false))
}

func (d *fieldDecoder) optInt64(key string) Optional[int64] {
	if !d.has(key) {
		return Optional[int64]{}
	}
	return Some(d.int64(key, false))
}

func (d *fieldDecoder) optBool(key string) Optional[bool] {
	if !d.has(key) {
		return Optional[bool]{}
	}
	return Some(d.boolean(key, false))
}

func parseJavaBool(v string) (value, valid bool) {
	switch {
	case len(v) == 4 && (v == "true" || equalFoldASCII(v, "true")):
		return true, true
	case len(v) == 5 && (v == "false" || equalFoldASCII(v, "false")):
		return false, true
	}
	return false, false
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != b[i] {
			return false
		}
	}
	return true
}

// fieldEncoder builds extFields. Numbers are formatted into one fixed array and turned
// into strings with a single allocation when the fields are finished; the encoder
// lives on its caller's stack.
type fieldEncoder struct {
	fields remoting.Fields
	digits [160]byte // decimal text of the numeric fields, back to back
	nd     int       // bytes used in digits
	nums   [16]numRef
	n      int
}

// numRef is a numeric field whose value is still in digits: its index in fields and the
// end of its text.
type numRef struct{ field, end int }

func newFieldEncoder(capacity int) fieldEncoder {
	return fieldEncoder{fields: make(remoting.Fields, 0, capacity)}
}

func (e *fieldEncoder) str(key, value string) {
	e.fields = append(e.fields, remoting.Field{Key: key, Value: value})
}

// strOpt writes a nullable string field only when it is non-empty.
func (e *fieldEncoder) strOpt(key, value string) {
	if value != "" {
		e.str(key, value)
	}
}

func (e *fieldEncoder) int64(key string, v int64) {
	var tmp [20]byte
	text := strconv.AppendInt(tmp[:0], v, 10)
	if e.n == len(e.nums) || e.nd+len(text) > len(e.digits) {
		e.str(key, string(text))
		return
	}
	e.nd += copy(e.digits[e.nd:], text)
	e.nums[e.n] = numRef{field: len(e.fields), end: e.nd}
	e.n++
	e.fields = append(e.fields, remoting.Field{Key: key})
}

func (e *fieldEncoder) int32(key string, v int32) { e.int64(key, int64(v)) }

func (e *fieldEncoder) boolean(key string, v bool) {
	if v {
		e.str(key, "true")
	} else {
		e.str(key, "false")
	}
}

func (e *fieldEncoder) optInt32(key string, v Optional[int32]) {
	if v.Set {
		e.int32(key, v.Value)
	}
}

func (e *fieldEncoder) optInt64(key string, v Optional[int64]) {
	if v.Set {
		e.int64(key, v.Value)
	}
}

func (e *fieldEncoder) optBool(key string, v Optional[bool]) {
	if v.Set {
		e.boolean(key, v.Value)
	}
}

// done resolves the numeric fields and returns the fields.
func (e *fieldEncoder) done() remoting.Fields {
	if e.n > 0 {
		all := string(e.digits[:e.nd])
		start := 0
		for _, r := range e.nums[:e.n] {
			e.fields[r.field].Value = all[start:r.end]
			start = r.end
		}
	}
	return e.fields
}
