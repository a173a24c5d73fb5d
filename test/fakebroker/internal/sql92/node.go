package sql92

import "strings"

// node is one expression of the compiled tree, shaped as 4.9.8 builds it (so that its
// String, which error remarks quote, reads as 4.9.8's toString).
type node interface {
	// eval evaluates the node for one message; an error is an exception 4.9.8 would
	// throw, which makes the message not match.
	eval(props Lookup) (value, error)
	String() string
}

// Lookup returns a message property's value and whether the message has it.
type Lookup func(name string) (value string, ok bool)

// constant is a ConstantExpression; boolean marks TRUE, FALSE and NULL, which 4.9.8
// parses as BooleanConstantExpression (a constant that is also a boolean expression).
type constant struct {
	v       value
	boolean bool
}

func (c *constant) eval(Lookup) (value, error) { return c.v, nil }

func (c *constant) String() string {
	switch c.v.k {
	case kNull:
		return "NULL"
	case kBool:
		if c.v.b {
			return "TRUE"
		}
		return "FALSE"
	case kString:
		return "'" + strings.ReplaceAll(c.v.s, "'", "''") + "'"
	}
	return c.v.String()
}

// property is a PropertyExpression: a message property, always a String (or null).
type property struct{ name string }

func (p *property) eval(props Lookup) (value, error) {
	if props == nil {
		return nullValue, nil
	}
	if s, ok := props(p.name); ok {
		return value{k: kString, s: s}, nil
	}
	return nullValue, nil
}

func (p *property) String() string { return p.name }

// logic is LogicExpression's AND and OR: left to right, stopping at the first operand
// that decides (FALSE for AND, TRUE for OR); otherwise null if either was null.
type logic struct {
	or          bool
	left, right node
}

func (l *logic) eval(props Lookup) (value, error) {
	lv, err := l.left.eval(props)
	if err != nil {
		return value{}, err
	}
	if lv.k == kBool && lv.b == l.or {
		return lv, nil
	}
	rv, err := l.right.eval(props)
	if err != nil {
		return value{}, err
	}
	if rv.k == kBool && rv.b == l.or {
		return rv, nil
	}
	if lv.k == kNull || rv.k == kNull {
		return nullValue, nil
	}
	return boolValue(!l.or), nil
}

func (l *logic) String() string {
	sym := "&&"
	if l.or {
		sym = "||"
	}
	return "(" + l.left.String() + " " + sym + " " + l.right.String() + ")"
}

// Comparison operators.
const (
	opEq = "=="
	opGt = ">"
	opGe = ">="
	opLt = "<"
	opLe = "<="
)

// comparison is a ComparisonExpression.
type comparison struct {
	op          string
	left, right node
}

func (c *comparison) eval(props Lookup) (value, error) {
	if c.op == opEq {
		return c.evalEqual(props)
	}
	lv, err := c.left.eval(props)
	if err != nil || lv.k == kNull {
		return nullValue, err
	}
	rv, err := c.right.eval(props)
	if err != nil || rv.k == kNull {
		return nullValue, err
	}
	if lv.k == kString && rv.k == kString {
		// Strings are not ordered: both are read as doubles.
		lf, lerr := javaParseDouble(lv.s)
		rf, rerr := javaParseDouble(rv.s)
		if lerr != nil || rerr != nil {
			return value{}, runtimeException("It's illegal to compare string by '>=', '>', '<', '<='. lv=" +
				lv.s + ", rv=" + rv.s)
		}
		return boolValue(c.holds(javaCompareDouble(lf, rf))), nil
	}
	n, err := javaCompare(lv, rv)
	if err != nil {
		return value{}, err
	}
	return boolValue(c.holds(n)), nil
}

// evalEqual is doCreateEqual's evaluation: null on the left alone gives null, on the
// right alone FALSE, on both TRUE; equal objects are TRUE; otherwise they are compared
// with conversion.
func (c *comparison) evalEqual(props Lookup) (value, error) {
	lv, err := c.left.eval(props)
	if err != nil {
		return value{}, err
	}
	rv, err := c.right.eval(props)
	if err != nil {
		return value{}, err
	}
	switch {
	case lv.k == kNull && rv.k == kNull:
		return trueValue, nil
	case lv.k == kNull:
		return nullValue, nil
	case rv.k == kNull:
		return falseValue, nil
	case javaEquals(lv, rv):
		return trueValue, nil
	}
	n, err := javaCompare(lv, rv)
	if err != nil {
		return value{}, err
	}
	return boolValue(n == 0), nil
}

func (c *comparison) holds(n int) bool {
	switch c.op {
	case opEq:
		return n == 0
	case opGt:
		return n > 0
	case opGe:
		return n >= 0
	case opLt:
		return n < 0
	}
	return n <= 0
}

func (c *comparison) String() string {
	return "(" + c.left.String() + " " + c.op + " " + c.right.String() + ")"
}

// not is UnaryExpression.createNOT over a boolean expression.
type not struct{ x node }

func (n *not) eval(props Lookup) (value, error) {
	v, err := n.x.eval(props)
	if err != nil || v.k == kNull {
		return nullValue, err
	}
	return boolValue(!v.b), nil
}

func (n *not) String() string { return "(NOT " + n.x.String() + ")" }

// negate is UnaryExpression.createNegate: a number negated, anything else null.
type negate struct{ x node }

func (n *negate) eval(props Lookup) (value, error) {
	v, err := n.x.eval(props)
	if err != nil {
		return value{}, err
	}
	switch v.k {
	case kInt:
		return value{k: kInt, i: int64(-int32(v.i))}, nil
	case kLong:
		return value{k: kLong, i: -v.i}, nil
	case kDouble:
		return value{k: kDouble, f: -v.f}, nil
	}
	return nullValue, nil
}

func (n *negate) String() string { return "(- " + n.x.String() + ")" }

// booleanCast is UnaryExpression.createBooleanCast, which 4.9.8 puts around a property
// used as a condition: null stays null, a Boolean is itself, anything else (every
// property value, a string) is FALSE.
type booleanCast struct{ x node }

func (b *booleanCast) eval(props Lookup) (value, error) {
	v, err := b.x.eval(props)
	if err != nil || v.k == kNull {
		return nullValue, err
	}
	if v.k != kBool {
		return falseValue, nil
	}
	return v, nil
}

func (b *booleanCast) String() string { return b.x.String() }

// in is UnaryExpression.createInExpression: a property's string value in (or, with
// not, not in) a list of strings; null when the property is missing.
type in struct {
	prop  *property
	list  []string // as written, for String: a list under 5 elements
	set   map[string]struct{}
	shown []string // how 4.9.8's toString lists them (a HashSet from 5 elements on)
	not   bool
}

func newIn(p *property, list []string, notIn bool) *in {
	n := &in{prop: p, list: list, not: notIn, set: make(map[string]struct{}, len(list)), shown: list}
	for _, s := range list {
		n.set[s] = struct{}{}
	}
	if len(list) >= 5 {
		n.shown = javaHashSetOrder(list)
	}
	return n
}

func (n *in) eval(props Lookup) (value, error) {
	v, err := n.prop.eval(props)
	if err != nil || v.k != kString {
		return nullValue, err
	}
	_, found := n.set[v.s]
	return boolValue(found != n.not), nil
}

func (n *in) String() string {
	sym := "IN"
	if n.not {
		sym = "NOT IN"
	}
	return n.prop.String() + " " + sym + " ( " + strings.Join(n.shown, ", ") + " )"
}

// isBoolean reports whether n is a BooleanExpression in 4.9.8's class hierarchy.
func isBoolean(n node) bool {
	switch n := n.(type) {
	case *constant:
		return n.boolean
	case *logic, *comparison, *not, *booleanCast, *in:
		return true
	}
	return false
}
