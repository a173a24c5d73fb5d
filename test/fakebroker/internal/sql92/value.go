package sql92

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
)

// kind is the Java class of a value: what 4.9.8's comparisons switch on.
type kind uint8

const (
	kNull   kind = iota
	kBool        // java.lang.Boolean
	kInt         // java.lang.Integer
	kLong        // java.lang.Long
	kDouble      // java.lang.Double
	kString      // java.lang.String
)

// value is a Java value: null, Boolean, Integer, Long, Double or String.
type value struct {
	k kind
	b bool
	i int64 // Integer (within int32) and Long
	f float64
	s string
}

var (
	nullValue  = value{}
	trueValue  = value{k: kBool, b: true}
	falseValue = value{k: kBool}
)

func boolValue(b bool) value {
	if b {
		return trueValue
	}
	return falseValue
}

// String renders v as Java's String.valueOf (what %s and string concatenation give).
func (v value) String() string {
	switch v.k {
	case kBool:
		return strconv.FormatBool(v.b)
	case kInt, kLong:
		return strconv.FormatInt(v.i, 10)
	case kDouble:
		return javaDouble(v.f)
	case kString:
		return v.s
	}
	return "null"
}

// javaException is an exception a 4.9.8 broker throws while parsing or evaluating:
// Throwable.toString of it is what a remark shows.
type javaException struct{ text string }

func (e *javaException) Error() string { return e.text }

const (
	classRuntime       = "java.lang.RuntimeException"
	classNumberFormat  = "java.lang.NumberFormatException"
	classClassCast     = "java.lang.ClassCastException"
	classStackOver     = "java.lang.StackOverflowError"
	classParse         = "org.apache.rocketmq.filter.parser.ParseException"
	classTokenMgrError = "org.apache.rocketmq.filter.parser.TokenMgrError"
)

func runtimeException(msg string) *javaException {
	return &javaException{text: classRuntime + ": " + msg}
}

// numberFormat is the NumberFormatException of Integer/Long/Double.valueOf(s).
func numberFormat(s string) *javaException {
	return &javaException{text: classNumberFormat + ": For input string: \"" + s + "\""}
}

// booleanToStringCast is the ClassCastException 4.9.8 meets comparing a Boolean with a
// String (it casts the Boolean to String), as JDK 17 words it.
var booleanToStringCast = &javaException{text: classClassCast + ": class java.lang.Boolean cannot be cast to " +
	"class java.lang.String (java.lang.Boolean and java.lang.String are in module java.base of loader 'bootstrap')"}

// javaParseInt is Integer.valueOf(String): an optional sign and decimal digits (any
// Unicode decimal digit of the BMP, as Character.digit takes them), within 32 bits.
func javaParseInt(s string) (int64, error) { return javaParseInteger(s, math.MinInt32, math.MaxInt32) }

// javaParseLong is Long.valueOf(String).
func javaParseLong(s string) (int64, error) { return javaParseInteger(s, math.MinInt64, math.MaxInt64) }

func javaParseInteger(s string, lo, hi int64) (int64, error) {
	rs := []rune(s)
	if len(rs) == 0 {
		return 0, numberFormat(s)
	}
	neg := false
	start := 0
	switch rs[0] {
	case '-':
		neg, start = true, 1
	case '+':
		start = 1
	}
	if start == len(rs) {
		return 0, numberFormat(s)
	}
	var acc int64 // accumulated negatively, as Java does, so the minimum fits
	limit := -hi
	if neg {
		limit = lo
	}
	for _, r := range rs[start:] {
		d := javaDigit(r)
		if d < 0 || acc < limit/10 {
			return 0, numberFormat(s)
		}
		acc *= 10
		if acc < limit+int64(d) {
			return 0, numberFormat(s)
		}
		acc -= int64(d)
	}
	if neg {
		return acc, nil
	}
	return -acc, nil
}

// javaDigit is Character.digit(c, 10) for a char: the value of a BMP decimal digit, or
// -1. (A character beyond the BMP is two chars in Java, neither a digit.)
func javaDigit(r rune) int {
	if r > 0xFFFF || !unicode.IsDigit(r) {
		return -1
	}
	if r <= '9' {
		return int(r - '0')
	}
	// Unicode decimal digits come in runs of ten, zero first.
	start := r
	for start > 0 && unicode.IsDigit(start-1) {
		start--
	}
	return int(r-start) % 10
}

// javaParseDouble is Double.valueOf(String): surrounding characters up to U+0020
// trimmed, an optional sign, then NaN, Infinity, a hexadecimal float (0x…p…) or a
// decimal one with ASCII digits, and an optional f, F, d or D suffix.
func javaParseDouble(s string) (float64, error) {
	t := strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if t == "" {
		return 0, &javaException{text: classNumberFormat + ": empty String"}
	}
	body, neg := t, false
	switch body[0] {
	case '-':
		body, neg = body[1:], true
	case '+':
		body = body[1:]
	}
	sign := 1.0
	if neg {
		sign = -1
	}
	switch body {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(int(sign)), nil
	}
	if n := len(body); n > 0 && strings.ContainsRune("fFdD", rune(body[n-1])) {
		body = body[:n-1]
	}
	if !javaFloatSyntax(body) {
		return 0, numberFormat(s)
	}
	f, err := strconv.ParseFloat(body, 64)
	if err != nil && !isRangeErr(err) {
		return 0, numberFormat(s)
	}
	return sign * f, nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// javaFloatSyntax checks an unsigned Java float literal without its suffix:
// digits [. digits] [e±digits], or 0x hexdigits [. hexdigits] p±digits, with at least
// one mantissa digit.
func javaFloatSyntax(b string) bool {
	i := 0
	run := func(ok func(byte) bool) int {
		j := i
		for i < len(b) && ok(b[i]) {
			i++
		}
		return i - j
	}
	dec := func(c byte) bool { return c >= '0' && c <= '9' }
	hex := func(c byte) bool { return dec(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	expo := func(marks string, required bool) bool {
		if i == len(b) || !strings.ContainsRune(marks, rune(b[i])) {
			return !required
		}
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		return run(dec) > 0
	}
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		i = 2
		n := run(hex)
		if i < len(b) && b[i] == '.' {
			i++
			n += run(hex)
		}
		return n > 0 && expo("pP", true) && i == len(b)
	}
	n := run(dec)
	if i < len(b) && b[i] == '.' {
		i++
		n += run(dec)
	}
	return n > 0 && expo("eE", false) && i == len(b)
}

// javaDouble is Double.toString: plain notation with at least one fraction digit for
// magnitudes in [1e-3, 1e7), computerized scientific notation ("1.0E10") otherwise,
// with the shortest digits that read back as the same double.
func javaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// javaCompareDouble is Double.compare: NaN above everything and equal to itself, -0.0
// below 0.0.
func javaCompareDouble(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	ab, bb := javaDoubleBits(a), javaDoubleBits(b)
	switch {
	case ab == bb:
		return 0
	case ab < bb:
		return -1
	}
	return 1
}

// javaDoubleBits is Double.doubleToLongBits: one NaN.
func javaDoubleBits(f float64) int64 {
	if math.IsNaN(f) {
		return 0x7ff8000000000000
	}
	return int64(math.Float64bits(f))
}

// javaCompareStrings is String.compareTo: UTF-16 code units in order.
func javaCompareStrings(a, b string) int {
	if a == b {
		return 0
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return int(ua[i]) - int(ub[i])
		}
	}
	return len(ua) - len(ub)
}

func compareInts(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// javaEquals is Object.equals between two values of 4.9.8's expressions: same class and
// same value (Double by its bits).
func javaEquals(a, b value) bool {
	if a.k != b.k {
		return false
	}
	switch a.k {
	case kNull:
		return true
	case kBool:
		return a.b == b.b
	case kInt, kLong:
		return a.i == b.i
	case kDouble:
		return javaDoubleBits(a.f) == javaDoubleBits(b.f)
	}
	return a.s == b.s
}

// javaCompare is ComparisonExpression.__compare with string conversion on (as every
// comparison 4.9.8 parses has it): values of different classes are converted, the
// left one up to the right one's class (a String operand is parsed as the other
// operand's class); pairs it cannot convert compare as -1. A string that does not
// parse is an error, as is a Boolean against a String (4.9.8 casts the Boolean to
// String).
func javaCompare(lv, rv value) (int, error) {
	if lv.k != rv.k {
		var err error
		switch lv.k {
		case kBool:
			if rv.k != kString {
				return -1, nil
			}
			return 0, booleanToStringCast
		case kInt:
			switch rv.k {
			case kLong:
				lv.k = kLong
			case kDouble:
				lv = value{k: kDouble, f: float64(lv.i)}
			case kString:
				rv, err = parseAs(kInt, rv.s)
			default:
				return -1, nil
			}
		case kLong:
			switch rv.k {
			case kInt:
				rv.k = kLong
			case kDouble:
				lv = value{k: kDouble, f: float64(lv.i)}
			case kString:
				rv, err = parseAs(kLong, rv.s)
			default:
				return -1, nil
			}
		case kDouble:
			switch rv.k {
			case kInt, kLong:
				rv = value{k: kDouble, f: float64(rv.i)}
			case kString:
				rv, err = parseAs(kDouble, rv.s)
			default:
				return -1, nil
			}
		case kString:
			switch rv.k {
			case kBool:
				lv = boolValue(strings.EqualFold(lv.s, "true"))
			case kInt, kLong, kDouble:
				lv, err = parseAs(rv.k, lv.s)
			default:
				return -1, nil
			}
		default:
			return -1, nil
		}
		if err != nil {
			// __compare wraps the NumberFormatException in a RuntimeException.
			return 0, runtimeException(err.Error())
		}
	}
	switch lv.k {
	case kBool:
		switch {
		case lv.b == rv.b:
			return 0, nil
		case rv.b:
			return -1, nil
		}
		return 1, nil
	case kInt, kLong:
		return compareInts(lv.i, rv.i), nil
	case kDouble:
		return javaCompareDouble(lv.f, rv.f), nil
	case kString:
		return javaCompareStrings(lv.s, rv.s), nil
	}
	return -1, nil
}

// parseAs parses s as Integer.valueOf, Long.valueOf or Double.valueOf.
func parseAs(k kind, s string) (value, error) {
	switch k {
	case kInt:
		i, err := javaParseInt(s)
		return value{k: kInt, i: i}, err
	case kLong:
		i, err := javaParseLong(s)
		return value{k: kLong, i: i}, err
	}
	f, err := javaParseDouble(s)
	return value{k: kDouble, f: f}, err
}

// javaStringHash is String.hashCode over UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, c := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(c)
	}
	return h
}

// javaHashSetOrder returns the distinct elements in the order a java.util.HashSet made
// from them (new HashSet<>(list)) iterates them: by bucket of the final table, and in
// insertion order within a bucket. The table starts at the size HashSet picks for the
// list and doubles when it fills or a bucket of a table under 64 reaches 9 entries, as
// HashMap does; a bucket of a larger table becomes a tree in Java, whose iteration
// order this does not follow.
func javaHashSetOrder(elems []string) []string {
	capacity := 1
	for capacity < max(int(float32(len(elems))/0.75)+1, 16) {
		capacity <<= 1
	}
	type entry struct {
		s    string
		hash uint32
	}
	hashOf := func(s string) uint32 {
		h := uint32(javaStringHash(s))
		return h ^ h>>16
	}
	var buckets [][]entry
	fill := func(entries []entry) {
		buckets = make([][]entry, capacity)
		for _, e := range entries {
			i := e.hash & uint32(capacity-1)
			buckets[i] = append(buckets[i], e)
		}
	}
	order := func() []entry {
		var out []entry
		for _, b := range buckets {
			out = append(out, b...)
		}
		return out
	}
	fill(nil)
	seen := map[string]bool{}
	size := 0
	for _, s := range elems {
		if seen[s] {
			continue
		}
		seen[s] = true
		e := entry{s: s, hash: hashOf(s)}
		i := e.hash & uint32(capacity-1)
		buckets[i] = append(buckets[i], e)
		size++
		if len(buckets[i]) >= 9 && capacity < 64 { // treeifyBin on a small table resizes
			capacity <<= 1
			fill(order())
		}
		if size > capacity*3/4 {
			capacity <<= 1
			fill(order())
		}
	}
	out := make([]string, 0, size)
	for _, e := range order() {
		out = append(out, e.s)
	}
	return out
}
