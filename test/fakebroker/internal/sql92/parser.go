package sql92

import (
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Bounds of what Compile accepts.
const (
	// MaxLength is the longest expression, in UTF-16 characters.
	MaxLength = 1 << 16
	// MaxDepth bounds the nesting of parentheses and unary operators. 4.9.8 has no
	// limit of its own: its recursive parser runs out of stack somewhere beyond it, and
	// the remark is then java.lang.StackOverflowError, as here.
	MaxDepth = 128
	// MaxNodes bounds the operators and operands of an expression, and so the work of
	// evaluating it for one message.
	MaxNodes = 4096
)

// Error is an expression a 4.9.8 broker refuses to compile.
type Error struct {
	// Remark is what 4.9.8's CHECK_CLIENT_CONFIG answer carries: the toString of the
	// exception its parser threw, e.g. "org.apache.rocketmq.filter.parser.ParseException:
	// Encountered …".
	Remark string
}

func (e *Error) Error() string { return "sql92: " + e.Remark }

// Expr is a compiled expression; it is immutable and safe for concurrent use.
type Expr struct {
	text string
	root node
}

// Result is the value of an expression for one message.
type Result int8

// Results. A message matches only when its result is True.
const (
	Unknown Result = iota // SQL's unknown: Java's null
	False
	True
)

// Compile parses expr as 4.9.8's SelectorParser does, with its checks, and returns the
// compiled expression or an *Error whose Remark is 4.9.8's.
func Compile(expr string) (e *Expr, err error) {
	if n := len(utf16.Encode([]rune(expr))); n > MaxLength {
		return nil, &Error{Remark: "fakebroker: the expression is " + strconv.Itoa(n) +
			" characters long; at most " + strconv.Itoa(MaxLength) + " are accepted"}
	}
	p := &parser{lx: newLexer(expr)}
	defer func() {
		if r := recover(); r != nil {
			je, ok := r.(*javaException)
			if !ok {
				panic(r)
			}
			e, err = nil, &Error{Remark: je.text}
		}
	}()
	root := p.asBoolean(p.orExpr()) // JmsSelector: nothing after the expression is read
	return &Expr{text: expr, root: root}, nil
}

// Text returns the expression as written.
func (e *Expr) Text() string { return e.text }

// String returns the compiled expression as 4.9.8's toString writes it, e.g.
// "((a > 5) && (b == 'x'))".
func (e *Expr) String() string { return e.root.String() }

// Eval evaluates the expression for a message whose properties props returns (nil: a
// message without properties). An error is an exception 4.9.8 throws evaluating it
// (a property that does not parse as the number it is compared with, ...): the
// message then does not match.
func (e *Expr) Eval(props Lookup) (Result, error) {
	v, err := e.root.eval(props)
	switch {
	case err != nil:
		return Unknown, err
	case v.k != kBool:
		return Unknown, nil
	case v.b:
		return True, nil
	}
	return False, nil
}

// Matches reports whether a message with these properties passes the filter, as
// 4.9.8's ExpressionMessageFilter.isMatchedByCommitLog decides: the result is TRUE.
func (e *Expr) Matches(props Lookup) bool {
	r, err := e.Eval(props)
	return err == nil && r == True
}

func bit(kinds ...int) uint64 {
	var m uint64
	for _, k := range kinds {
		m |= 1 << k
	}
	return m
}

// The tokens each choice point of the grammar accepts (4.9.8's jj_la1 sets), which an
// error message lists when the parser fails there before consuming another token.
var (
	expOr       = bit(kindOr)
	expAnd      = bit(kindAnd)
	expEquality = bit(kindIs, kindEq, kindNe)
	expEqOrNe   = bit(kindEq, kindNe)
	expCompare  = bit(kindNot, kindBetween, kindIn, kindGt, kindGe, kindLt, kindLe)
	expOrdering = bit(kindBetween, kindGt, kindGe, kindLt, kindLe)
	expIn       = bit(kindIn)
	expComma    = bit(kindComma)
	expUnary    = bit(kindNot, kindTrue, kindFalse, kindNull, kindDecimal, kindFloat, kindString, kindID,
		kindLParen, kindMinus)
)

// parser is a recursive-descent parser of 4.9.8's grammar (SelectorParser.jj) that
// keeps what its JavaCC parser keeps for error messages: the choice points tried since
// the last token was consumed.
type parser struct {
	lx    *lexer
	pos   int    // tokens consumed
	gen   int    // incremented by each consumed token
	laGen int    // the generation la belongs to
	la    uint64 // tokens the choice points of this generation accept
	depth int
	nodes int
}

func (p *parser) kindAt(ahead int) int { return p.lx.token(p.pos + ahead).kind }
func (p *parser) peek() int            { return p.kindAt(0) }

func (p *parser) consume(kind int) token {
	t := p.lx.token(p.pos)
	if t.kind != kind {
		p.fail(kind)
	}
	p.pos++
	p.gen++
	return t
}

// expect records a choice point's accepted tokens.
func (p *parser) expect(mask uint64) {
	if p.laGen != p.gen {
		p.la, p.laGen = 0, p.gen
	}
	p.la |= mask
}

// fail throws 4.9.8's ParseException at the next token. kind is the token a consume
// wanted, or -1 after a choice point found no alternative.
func (p *parser) fail(kind int) {
	var mask uint64
	if p.laGen == p.gen {
		mask = p.la
	}
	if kind >= 0 {
		mask |= 1 << kind
	}
	next := p.lx.token(p.pos)
	var b strings.Builder
	b.WriteString(`Encountered "`)
	if mask != 0 { // the longest expected sequence is one token long
		if next.kind == kindEOF {
			b.WriteString(kindImage[kindEOF])
		} else {
			b.WriteString(" " + kindImage[next.kind] + ` "` + javaEscape(utf16.Encode([]rune(next.image))) + ` "`)
		}
	}
	b.WriteString(`" at line ` + strconv.Itoa(next.line) + ", column " + strconv.Itoa(next.col) + ".\n")
	if bits.OnesCount64(mask) == 1 {
		b.WriteString("Was expecting:\n    ")
	} else {
		b.WriteString("Was expecting one of:\n    ")
	}
	for k := range kindImage {
		if mask&(1<<k) != 0 {
			b.WriteString(kindImage[k] + " ...\n    ")
		}
	}
	panic(&javaException{text: classParse + ": " + b.String()})
}

func (p *parser) enter() {
	p.depth++
	if p.depth > MaxDepth {
		panic(&javaException{text: classStackOver})
	}
}

func (p *parser) leave() { p.depth-- }

// add counts a new node against MaxNodes.
func (p *parser) add(n node) node {
	p.nodes++
	if p.nodes > MaxNodes {
		panic(&javaException{text: "fakebroker: the expression has more than " + strconv.Itoa(MaxNodes) +
			" operators and operands"})
	}
	return n
}

// orExpression: andExpression (OR andExpression)*
func (p *parser) orExpr() node {
	left := p.andExpr()
	for p.peek() == kindOr {
		p.consume(kindOr)
		right := p.andExpr()
		left = p.add(&logic{or: true, left: p.asBoolean(left), right: p.asBoolean(right)})
	}
	p.expect(expOr)
	return left
}

// andExpression: equalityExpression (AND equalityExpression)*
func (p *parser) andExpr() node {
	left := p.equalityExpr()
	for p.peek() == kindAnd {
		p.consume(kindAnd)
		right := p.equalityExpr()
		left = p.add(&logic{left: p.asBoolean(left), right: p.asBoolean(right)})
	}
	p.expect(expAnd)
	return left
}

// equalityExpression: comparisonExpression ( "=" c | "<>" c | IS NULL | IS NOT NULL )*
func (p *parser) equalityExpr() node {
	left := p.comparisonExpr()
	for {
		switch p.peek() {
		case kindEq:
			p.consume(kindEq)
			left = p.createEqual(left, p.comparisonExpr())
		case kindNe:
			p.consume(kindNe)
			left = p.add(&not{x: p.createEqual(left, p.comparisonExpr())})
		case kindIs:
			p.expect(expEqOrNe)
			if p.kindAt(1) == kindNull { // LOOKAHEAD(2)
				p.consume(kindIs)
				p.consume(kindNull)
				left = p.isNull(left)
			} else {
				p.consume(kindIs)
				p.consume(kindNot)
				p.consume(kindNull)
				left = p.add(&not{x: p.isNull(left)})
			}
		default:
			p.expect(expEquality)
			return left
		}
	}
}

// comparisonExpression: unaryExpr ( > u | >= u | < u | <= u | BETWEEN u AND u |
// NOT BETWEEN u AND u | IN (list) | NOT IN (list) )*
func (p *parser) comparisonExpr() node {
	left := p.unaryExpr()
	for {
		switch k := p.peek(); k {
		case kindGt, kindGe, kindLt, kindLe:
			p.consume(k)
			left = p.createOrdering(map[int]string{kindGt: opGt, kindGe: opGe, kindLt: opLt, kindLe: opLe}[k],
				left, p.unaryExpr())
		case kindBetween:
			p.consume(kindBetween)
			low := p.unaryExpr()
			p.consume(kindAnd)
			left = p.createBetween(left, low, p.unaryExpr())
		case kindNot, kindIn:
			p.expect(expOrdering)
			switch {
			case k == kindNot && p.kindAt(1) == kindBetween: // LOOKAHEAD(2)
				p.consume(kindNot)
				p.consume(kindBetween)
				low := p.unaryExpr()
				p.consume(kindAnd)
				high := p.unaryExpr()
				left = p.add(&logic{or: true, left: p.createOrdering(opLt, left, low), right: p.createOrdering(opGt, left, high)})
			case k == kindIn:
				p.consume(kindIn)
				left = p.createIn(left, p.inList(), false)
			default:
				p.expect(expIn)
				if p.kindAt(1) != kindIn { // LOOKAHEAD(2) NOT IN
					p.fail(-1)
				}
				p.consume(kindNot)
				p.consume(kindIn)
				left = p.createIn(left, p.inList(), true)
			}
		default:
			p.expect(expCompare)
			return left
		}
	}
}

// inList: "(" stringLiteral ("," stringLiteral)* ")"
func (p *parser) inList() []string {
	p.consume(kindLParen)
	list := []string{stringLiteral(p.consume(kindString))}
	for p.peek() == kindComma {
		p.consume(kindComma)
		list = append(list, stringLiteral(p.consume(kindString)))
	}
	p.expect(expComma)
	p.consume(kindRParen)
	return list
}

// unaryExpr: LOOKAHEAD("+" unaryExpr) "+" unaryExpr | "-" unaryExpr | NOT unaryExpr |
// primaryExpr
func (p *parser) unaryExpr() node {
	p.enter()
	defer p.leave()
	if p.peek() == kindPlus {
		if _, ok := p.scanUnary(p.pos + 1); ok {
			p.consume(kindPlus)
			return p.unaryExpr() // unary plus builds nothing
		}
	}
	switch p.peek() {
	case kindMinus:
		p.consume(kindMinus)
		return p.add(&negate{x: p.unaryExpr()})
	case kindNot:
		p.consume(kindNot)
		return p.add(&not{x: p.asBoolean(p.unaryExpr())})
	case kindID:
		return p.add(&property{name: p.consume(kindID).image})
	case kindLParen:
		p.consume(kindLParen)
		x := p.orExpr()
		p.consume(kindRParen)
		return x
	case kindString, kindDecimal, kindFloat, kindTrue, kindFalse, kindNull:
		return p.add(p.literal())
	}
	p.expect(expUnary)
	p.fail(-1)
	return nil
}

// literal reads a literal, as 4.9.8's ConstantExpression factories make it.
func (p *parser) literal() *constant {
	switch k := p.peek(); k {
	case kindString:
		return &constant{v: value{k: kString, s: stringLiteral(p.consume(kindString))}}
	case kindDecimal:
		return decimalConstant(p.consume(kindDecimal).image)
	case kindFloat:
		return floatConstant(p.consume(kindFloat).image)
	case kindTrue, kindFalse:
		p.consume(k)
		return &constant{v: boolValue(k == kindTrue), boolean: true}
	}
	p.consume(kindNull)
	return &constant{v: nullValue, boolean: true}
}

// stringLiteral decodes a quoted string: a doubled quote stands for one.
func stringLiteral(t token) string {
	return strings.ReplaceAll(t.image[1:len(t.image)-1], "''", "'")
}

// decimalConstant is ConstantExpression.createFromDecimal: an Integer when the value
// fits 32 bits, a Long otherwise; beyond 64 bits, new Long(text) fails.
func decimalConstant(text string) *constant {
	text = strings.TrimRight(text, "lL")
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		panic(numberFormat(text))
	}
	if n >= -1<<31 && n < 1<<31 {
		return &constant{v: value{k: kInt, i: n}}
	}
	return &constant{v: value{k: kLong, i: n}}
}

// floatConstant is ConstantExpression.createFloat, which refuses a value above
// Double.MAX_VALUE and, comparing with Double.MIN_VALUE (the smallest positive double),
// any value that reads as zero.
func floatConstant(text string) *constant {
	f, err := javaParseDouble(text)
	switch {
	case err != nil:
		panic(err)
	case f > 1.7976931348623157e308:
		panic(runtimeException(text + " is greater than 1.7976931348623157E308"))
	case f < 4.9e-324:
		panic(runtimeException(text + " is less than 4.9E-324"))
	}
	return &constant{v: value{k: kDouble, f: f}}
}

// scanUnary is the syntactic lookahead 4.9.8 runs before a unary "+": does a unary
// expression start at token i? It builds nothing and checks nothing but the grammar;
// a loop that fails part-way backs off to before its last iteration.
func (p *parser) scanUnary(i int) (int, bool) {
	p.enter()
	defer p.leave()
	switch p.lx.token(i).kind {
	case kindPlus, kindMinus, kindNot:
		return p.scanUnary(i + 1)
	case kindString, kindDecimal, kindFloat, kindTrue, kindFalse, kindNull, kindID:
		return i + 1, true
	case kindLParen:
		j, ok := p.scanOr(i + 1)
		if !ok || p.lx.token(j).kind != kindRParen {
			return 0, false
		}
		return j + 1, true
	}
	return 0, false
}

// scanLoop scans first, then as many of next as follow.
func scanLoop(i int, first, next func(int) (int, bool)) (int, bool) {
	j, ok := first(i)
	if !ok {
		return 0, false
	}
	for {
		k, ok := next(j)
		if !ok {
			return j, true
		}
		j = k
	}
}

func (p *parser) scanOr(i int) (int, bool) {
	return scanLoop(i, p.scanAnd, func(j int) (int, bool) { return p.scanAfter(j, kindOr, p.scanAnd) })
}

func (p *parser) scanAnd(i int) (int, bool) {
	return scanLoop(i, p.scanEquality, func(j int) (int, bool) { return p.scanAfter(j, kindAnd, p.scanEquality) })
}

func (p *parser) scanEquality(i int) (int, bool) {
	return scanLoop(i, p.scanComparison, func(j int) (int, bool) {
		switch p.lx.token(j).kind {
		case kindEq, kindNe:
			return p.scanComparison(j + 1)
		case kindIs:
			if p.lx.token(j+1).kind == kindNull {
				return j + 2, true
			}
			return p.scanTokens(j, kindIs, kindNot, kindNull)
		}
		return 0, false
	})
}

func (p *parser) scanComparison(i int) (int, bool) {
	return scanLoop(i, p.scanUnary, func(j int) (int, bool) {
		switch p.lx.token(j).kind {
		case kindGt, kindGe, kindLt, kindLe:
			return p.scanUnary(j + 1)
		case kindBetween:
			return p.scanBetween(j + 1)
		case kindIn:
			return p.scanInList(j + 1)
		case kindNot:
			if k, ok := p.scanTokens(j, kindNot, kindBetween); ok {
				if k, ok := p.scanBetween(k); ok {
					return k, true
				}
			}
			if k, ok := p.scanTokens(j, kindNot, kindIn); ok {
				return p.scanInList(k)
			}
		}
		return 0, false
	})
}

func (p *parser) scanBetween(i int) (int, bool) {
	j, ok := p.scanUnary(i)
	if !ok {
		return 0, false
	}
	return p.scanAfter(j, kindAnd, p.scanUnary)
}

func (p *parser) scanInList(i int) (int, bool) {
	j, ok := p.scanTokens(i, kindLParen, kindString)
	if !ok {
		return 0, false
	}
	for {
		k, ok := p.scanTokens(j, kindComma, kindString)
		if !ok {
			break
		}
		j = k
	}
	return p.scanTokens(j, kindRParen)
}

// scanAfter scans the token kind, then what scan accepts.
func (p *parser) scanAfter(i, kind int, scan func(int) (int, bool)) (int, bool) {
	if p.lx.token(i).kind != kind {
		return 0, false
	}
	return scan(i + 1)
}

// scanTokens scans the given kinds in order.
func (p *parser) scanTokens(i int, kinds ...int) (int, bool) {
	for _, k := range kinds {
		if p.lx.token(i).kind != k {
			return 0, false
		}
		i++
	}
	return i, true
}
