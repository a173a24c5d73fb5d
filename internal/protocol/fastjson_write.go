package protocol

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/rmqpush/rmqpush/message"
)

// Style selects how a Writer writes what standard JSON cannot express.
type Style uint8

// Styles.
const (
	// StyleStandard writes strict JSON: a non-string key (an integer, a message queue)
	// becomes a string holding its JSON text, as fastjson's WriteNonStringKeyAsString
	// does, e.g. {"0":"addr"} and {"{\"brokerName\":\"b\",...}":7}.
	StyleStandard Style = iota
	// StyleFastjson writes what fastjson writes by default: integer keys unquoted
	// ({0:"addr"}) and message-queue keys as objects ({{"brokerName":"b",...}:7}).
	// Java tools parse queue-keyed maps only in this form.
	StyleFastjson
	// StyleBrowserCompatible writes what fastjson's BrowserCompatible feature writes,
	// as a 4.9.4+ name server does for clients of version 401 or later: keys as in
	// StyleStandard, every non-ASCII character escaped as \uXXXX, and integers beyond
	// ±2^53 quoted.
	StyleBrowserCompatible
)

// String returns the style's name.
func (s Style) String() string {
	switch s {
	case StyleStandard:
		return "standard"
	case StyleFastjson:
		return "fastjson"
	case StyleBrowserCompatible:
		return "browser-compatible"
	}
	return "style(" + strconv.Itoa(int(s)) + ")"
}

// maxSafeInteger is 2^53-1: BrowserCompatible quotes integers beyond ±this.
const maxSafeInteger = 1<<53 - 1

// Writer writes compact JSON. Calls must form valid JSON: a Key (or IntKey, QueueKey,
// KeyValue) before each member value of an object, balanced Begin/End calls. Commas are
// written for the caller.
type Writer struct {
	buf      []byte
	style    Style
	comma    bool // the next item of the current container needs a comma
	afterKey bool // a key was just written; the value follows without a comma
}

// NewWriter returns a Writer in the given style.
func NewWriter(style Style) *Writer { return &Writer{style: style} }

// Bytes returns what has been written. The slice is the Writer's buffer.
func (w *Writer) Bytes() []byte { return w.buf }

// Style returns the Writer's style.
func (w *Writer) Style() Style { return w.style }

func (w *Writer) sep() {
	if w.afterKey {
		w.afterKey = false
		return
	}
	if w.comma {
		w.buf = append(w.buf, ',')
	}
}

// BeginObject starts an object.
func (w *Writer) BeginObject() {
	w.sep()
	w.buf = append(w.buf, '{')
	w.comma = false
}

// EndObject ends an object.
func (w *Writer) EndObject() {
	w.buf = append(w.buf, '}')
	w.comma = true
}

// BeginArray starts an array.
func (w *Writer) BeginArray() {
	w.sep()
	w.buf = append(w.buf, '[')
	w.comma = false
}

// EndArray ends an array.
func (w *Writer) EndArray() {
	w.buf = append(w.buf, ']')
	w.comma = true
}

// Key writes a member name.
func (w *Writer) Key(name string) {
	w.sep()
	w.appendString(name)
	w.buf = append(w.buf, ':')
	w.afterKey = true
}

// IntKey writes an integer member key: unquoted in StyleFastjson, quoted otherwise.
func (w *Writer) IntKey(n int64) {
	if w.style != StyleFastjson {
		w.Key(strconv.FormatInt(n, 10))
		return
	}
	w.sep()
	w.buf = strconv.AppendInt(w.buf, n, 10)
	w.buf = append(w.buf, ':')
	w.afterKey = true
}

// QueueKey writes a message queue as a member key: the object
// {"brokerName":…,"queueId":…,"topic":…} itself in StyleFastjson, else a string holding
// that object's JSON.
func (w *Writer) QueueKey(q message.Queue) {
	if w.style != StyleFastjson {
		k := Writer{style: StyleFastjson}
		k.Queue(q)
		w.Key(string(k.buf))
		return
	}
	w.Queue(q)
	w.buf = append(w.buf, ':')
	w.afterKey = true
}

// Queue writes a message queue as an object with Java's field order.
func (w *Writer) Queue(q message.Queue) {
	w.BeginObject()
	w.Key("brokerName")
	w.Str(q.BrokerName)
	w.Key("queueId")
	w.Int(int64(q.QueueID))
	w.Key("topic")
	w.Str(q.Topic)
	w.EndObject()
}

// KeyValue writes a parsed value as a member key: a string as it is; any other value
// raw in StyleFastjson, else as a string holding its compact fastjson text.
func (w *Writer) KeyValue(k Value) {
	if k.kind == KindString {
		w.Key(k.s)
		return
	}
	if w.style != StyleFastjson {
		t := Writer{style: StyleFastjson}
		t.Value(k)
		w.Key(string(t.buf))
		return
	}
	w.Value(k)
	w.buf = append(w.buf, ':')
	w.afterKey = true
}

// Str writes a string.
func (w *Writer) Str(s string) {
	w.sep()
	w.appendString(s)
	w.comma = true
}

// Int writes an integer (quoted beyond ±2^53 in StyleBrowserCompatible).
func (w *Writer) Int(n int64) {
	w.sep()
	if w.style == StyleBrowserCompatible && (n > maxSafeInteger || n < -maxSafeInteger) {
		w.buf = append(w.buf, '"')
		w.buf = strconv.AppendInt(w.buf, n, 10)
		w.buf = append(w.buf, '"')
	} else {
		w.buf = strconv.AppendInt(w.buf, n, 10)
	}
	w.comma = true
}

// Float writes a number as Java writes a double: integral values keep a ".0"; NaN and
// infinities, which JSON cannot hold, are written as null (as fastjson does).
func (w *Writer) Float(f float64) {
	w.sep()
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		w.buf = append(w.buf, "null"...)
	default:
		start := len(w.buf)
		w.buf = strconv.AppendFloat(w.buf, f, 'f', -1, 64)
		integral := true
		for _, c := range w.buf[start:] {
			if c == '.' {
				integral = false
				break
			}
		}
		if integral {
			w.buf = append(w.buf, ".0"...)
		}
	}
	w.comma = true
}

// Bool writes true or false.
func (w *Writer) Bool(b bool) {
	w.sep()
	if b {
		w.buf = append(w.buf, "true"...)
	} else {
		w.buf = append(w.buf, "false"...)
	}
	w.comma = true
}

// Null writes null.
func (w *Writer) Null() {
	w.sep()
	w.buf = append(w.buf, "null"...)
	w.comma = true
}

// Value writes a parsed value, numbers as their literal text.
func (w *Writer) Value(v Value) {
	switch v.kind {
	case KindNull, KindAbsent:
		w.Null()
	case KindBool:
		w.Bool(v.b)
	case KindNumber:
		w.sep()
		w.buf = append(w.buf, v.s...)
		w.comma = true
	case KindString:
		w.Str(v.s)
	case KindArray:
		w.BeginArray()
		for _, e := range v.kids {
			w.Value(e)
		}
		w.EndArray()
	case KindObject:
		w.BeginObject()
		for i := 0; i < len(v.kids); i += 2 {
			w.KeyValue(v.kids[i])
			w.Value(v.kids[i+1])
		}
		w.EndObject()
	}
}

const hexDigits = "0123456789abcdef"

// appendString writes s quoted: '"', '\\' and control characters escaped; in
// StyleBrowserCompatible also every non-ASCII character (as UTF-16 \uXXXX units).
// Bytes that are not UTF-8 are copied as they are, except in StyleBrowserCompatible,
// where they become \ufffd.
func (w *Writer) appendString(s string) {
	b := append(w.buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && (c < utf8.RuneSelf || w.style != StyleBrowserCompatible) {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r >= 0x10000 {
				r -= 0x10000
				b = appendU(b, 0xD800+(r>>10))
				b = appendU(b, 0xDC00+(r&0x3FF))
			} else {
				b = appendU(b, r)
			}
			i += size
		}
		start = i
	}
	b = append(b, s[start:]...)
	w.buf = append(b, '"')
}

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
