package protocol

import (
	"math"
	"strconv"
)

// Kind is the kind of a JSON value.
type Kind uint8

// Kinds of values. The zero Value has KindAbsent: it is what Get returns for a member
// that is not there.
const (
	KindAbsent Kind = iota
	KindNull
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

// String returns the kind's name, as used in error messages.
func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindBool:
		return "boolean"
	case KindNumber:
		return "number"
	case KindString:
		return "string"
	case KindArray:
		return "array"
	case KindObject:
		return "object"
	default:
		return "nothing"
	}
}

// JSONError reports bad JSON, or a value of the wrong kind or range, at a byte offset of
// the input.
type JSONError struct {
	Offset int
	Msg    string
}

// Error returns "json: offset N: msg".
func (e *JSONError) Error() string {
	return "json: offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// Value is one parsed JSON value. Strings hold their unescaped text, numbers their
// literal text (read them with Int64, Int32 or Float64). An object's members keep their
// order, and a key may be any value: a string in standard JSON, a number or an object
// in fastjson's output.
type Value struct {
	kind Kind
	b    bool
	off  int32
	s    string  // KindString: the text; KindNumber: the literal
	kids []Value // KindArray: elements; KindObject: key, value, key, value, ...
}

// Kind returns the value's kind.
func (v Value) Kind() Kind { return v.kind }

// Offset returns the byte offset of the value in the input.
func (v Value) Offset() int { return int(v.off) }

// Exists reports whether the value is present (not the zero Value).
func (v Value) Exists() bool { return v.kind != KindAbsent }

// IsNull reports whether the value is absent or JSON null.
func (v Value) IsNull() bool { return v.kind == KindAbsent || v.kind == KindNull }

// Len returns the number of elements of an array or members of an object, else 0.
func (v Value) Len() int {
	switch v.kind {
	case KindArray:
		return len(v.kids)
	case KindObject:
		return len(v.kids) / 2
	}
	return 0
}

// Index returns element i of an array. It panics if i is out of range, like a slice.
func (v Value) Index(i int) Value { return v.kids[i] }

// Member returns the key and the value of member i of an object. It panics if i is out
// of range, like a slice.
func (v Value) Member(i int) (key, value Value) { return v.kids[2*i], v.kids[2*i+1] }

// Get returns the member of an object whose key is the string name (the last one, as
// Java's maps keep, if the name occurs twice), or the zero Value.
func (v Value) Get(name string) Value {
	if v.kind != KindObject {
		return Value{}
	}
	for i := len(v.kids) - 2; i >= 0; i -= 2 {
		if k := v.kids[i]; k.kind == KindString && k.s == name {
			return v.kids[i+1]
		}
	}
	return Value{}
}

// Text returns the text of a string or the literal of a number, else "".
func (v Value) Text() string {
	if v.kind == KindString || v.kind == KindNumber {
		return v.s
	}
	return ""
}

func (v Value) errorf(msg string) error { return &JSONError{Offset: int(v.off), Msg: msg} }

func (v Value) wrongKind(want string) error {
	return v.errorf("expected " + want + ", found " + v.kind.String())
}

// Str returns the text of a string. Null reads as "".
func (v Value) Str() (string, error) {
	switch v.kind {
	case KindString:
		return v.s, nil
	case KindNull, KindAbsent:
		return "", nil
	}
	return "", v.wrongKind("string")
}

// Int64 returns an integer exactly: a number without fraction or exponent, or a string
// holding one (fastjson quotes large longs in BrowserCompatible mode). Null reads as 0.
func (v Value) Int64() (int64, error) {
	switch v.kind {
	case KindNumber, KindString:
		n, err := strconv.ParseInt(v.s, 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return 0, v.errorf("integer " + strconv.Quote(v.s) + " out of int64 range")
			}
			return 0, v.errorf("expected an integer, found " + v.kind.String() + " " + strconv.Quote(v.s))
		}
		return n, nil
	case KindNull, KindAbsent:
		return 0, nil
	}
	return 0, v.wrongKind("integer")
}

// Int32 is Int64 limited to the int32 range.
func (v Value) Int32() (int32, error) {
	n, err := v.Int64()
	if err != nil {
		return 0, err
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, v.errorf("integer " + strconv.Quote(v.s) + " out of int32 range")
	}
	return int32(n), nil
}

// Float64 returns a number (or a string holding one) as a float64. Null reads as 0.
func (v Value) Float64() (float64, error) {
	switch v.kind {
	case KindNumber, KindString:
		f, err := strconv.ParseFloat(v.s, 64)
		if err != nil {
			return 0, v.errorf("expected a number, found " + v.kind.String() + " " + strconv.Quote(v.s))
		}
		return f, nil
	case KindNull, KindAbsent:
		return 0, nil
	}
	return 0, v.wrongKind("number")
}

// Bool returns a boolean: true or false, or the strings "true" and "false" as fastjson
// also accepts. Null reads as false.
func (v Value) Bool() (bool, error) {
	switch v.kind {
	case KindBool:
		return v.b, nil
	case KindString:
		if b, ok := parseJavaBool(v.s); ok {
			return b, nil
		}
	case KindNull, KindAbsent:
		return false, nil
	}
	return false, v.wrongKind("boolean")
}

// Elems returns the elements of an array. Null reads as no elements.
func (v Value) Elems() ([]Value, error) {
	switch v.kind {
	case KindArray:
		return v.kids, nil
	case KindNull, KindAbsent:
		return nil, nil
	}
	return nil, v.wrongKind("array")
}

// Fields calls fn for each member of an object whose key is a string, in order, and
// stops at the first error. Members with other keys are skipped. Null reads as an
// empty object.
func (v Value) Fields(fn func(name string, value Value) error) error {
	switch v.kind {
	case KindObject:
	case KindNull, KindAbsent:
		return nil
	default:
		return v.wrongKind("object")
	}
	for i := 0; i < len(v.kids); i += 2 {
		if k := v.kids[i]; k.kind == KindString {
			if err := fn(k.s, v.kids[i+1]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Members calls fn for each member of an object, whatever its key, in order, and stops
// at the first error. Null reads as an empty object.
func (v Value) Members(fn func(key, value Value) error) error {
	switch v.kind {
	case KindObject:
	case KindNull, KindAbsent:
		return nil
	default:
		return v.wrongKind("object")
	}
	for i := 0; i < len(v.kids); i += 2 {
		if err := fn(v.kids[i], v.kids[i+1]); err != nil {
			return err
		}
	}
	return nil
}
