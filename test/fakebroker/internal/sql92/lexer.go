package sql92

import (
	"strconv"
	"unicode/utf16"
)

// Token kinds, numbered as 4.9.8's SelectorParserConstants so that expected-token lists
// come out in its order.
const (
	kindEOF     = 0
	kindNot     = 8
	kindAnd     = 9
	kindOr      = 10
	kindBetween = 11
	kindIn      = 12
	kindTrue    = 13
	kindFalse   = 14
	kindNull    = 15
	kindIs      = 16
	kindDecimal = 17
	kindFloat   = 18
	kindString  = 20
	kindID      = 21
	kindEq      = 22
	kindNe      = 23
	kindGt      = 24
	kindGe      = 25
	kindLt      = 26
	kindLe      = 27
	kindLParen  = 28
	kindComma   = 29
	kindRParen  = 30
	kindPlus    = 31
	kindMinus   = 32
)

// kindImage is how 4.9.8's messages name each kind (its tokenImage table).
var kindImage = [...]string{
	kindEOF: "<EOF>", kindNot: `"NOT"`, kindAnd: `"AND"`, kindOr: `"OR"`,
	kindBetween: `"BETWEEN"`, kindIn: `"IN"`, kindTrue: `"TRUE"`, kindFalse: `"FALSE"`,
	kindNull: `"NULL"`, kindIs: `"IS"`, kindDecimal: "<DECIMAL_LITERAL>",
	kindFloat: "<FLOATING_POINT_LITERAL>", kindString: "<STRING_LITERAL>", kindID: "<ID>",
	kindEq: `"="`, kindNe: `"<>"`, kindGt: `">"`, kindGe: `">="`, kindLt: `"<"`,
	kindLe: `"<="`, kindLParen: `"("`, kindComma: `","`, kindRParen: `")"`,
	kindPlus: `"+"`, kindMinus: `"-"`,
}

// keywords are matched case-insensitively; a keyword wins over an identifier of the
// same length.
var keywords = map[string]int{
	"NOT": kindNot, "AND": kindAnd, "OR": kindOr, "BETWEEN": kindBetween, "IN": kindIn,
	"TRUE": kindTrue, "FALSE": kindFalse, "NULL": kindNull, "IS": kindIs,
}

type token struct {
	kind      int
	image     string // the text, as written
	line, col int    // where it begins
}

// lexer splits an expression into tokens on demand, as JavaCC's token manager does: a
// token is lexed only when the parser (or a lookahead) first asks for it, so a
// lexical error after the end of what the parser reads is never seen. The text is
// held as UTF-16 code units, the unit Java counts columns and reports characters in.
type lexer struct {
	u         []uint16
	line, col []int // position of each unit, as SimpleCharStream computes it
	next      int   // the unit the next token starts at or before
	toks      []token
	eofLine   int
	eofCol    int
	lexErr    *javaException // the lexical error met, once met
}

func newLexer(s string) *lexer {
	u := utf16.Encode([]rune(s))
	lx := &lexer{u: u, line: make([]int, len(u)), col: make([]int, len(u))}
	// SimpleCharStream: columns from 1, a tab advances to the next multiple of 8, and
	// \r, \n and \r\n each end a line (the position moves at the next character).
	line, col := 1, 0
	prevLF, prevCR := false, false
	for i, c := range u {
		col++
		switch {
		case prevLF:
			prevLF = false
			line, col = line+1, 1
		case prevCR:
			prevCR = false
			if c == '\n' {
				prevLF = true
			} else {
				line, col = line+1, 1
			}
		}
		switch c {
		case '\r':
			prevCR = true
		case '\n':
			prevLF = true
		case '\t':
			col--
			col += 8 - col%8
		}
		lx.line[i], lx.col[i] = line, col
	}
	// The end of the input is reported where the last character is; for an empty
	// input, 4.9.8 reads positions it never wrote: line 0, column 0.
	if n := len(u); n > 0 {
		lx.eofLine, lx.eofCol = lx.line[n-1], lx.col[n-1]
	}
	return lx
}

// token returns the i-th token, lexing up to it. It panics with the lexical error when
// the text cannot be split that far.
func (lx *lexer) token(i int) token {
	for len(lx.toks) <= i {
		if lx.lexErr != nil {
			panic(lx.lexErr)
		}
		lx.toks = append(lx.toks, lx.lex())
	}
	return lx.toks[i]
}

// lex reads the next token, skipping white space and comments.
func (lx *lexer) lex() token {
	u := lx.u
	n := len(u)
	for {
		i := lx.next
		if i >= n {
			return token{kind: kindEOF, line: lx.eofLine, col: lx.eofCol}
		}
		c := u[i]
		switch c {
		case ' ', '\t', '\n', '\r', '\f':
			lx.next++
			continue
		case '-':
			if end := lineCommentEnd(u, i); end > 0 {
				lx.next = end
				continue
			}
		case '/':
			if i+1 < n && u[i+1] == '*' {
				if end := blockCommentEnd(u, i+2); end > 0 {
					lx.next = end
					continue
				}
				lx.fail(i, n-1, true) // an unclosed comment runs to the end
			}
			if i+1 < n {
				lx.fail(i, i+1, i+1 == n-1) // "/" starts only a comment
			}
			lx.fail(i, i, true)
		}
		kind, end := lx.match(i)
		if kind < 0 {
			return token{} // not reached: match reports the error
		}
		lx.next = end
		return token{kind: kind, image: string(utf16.Decode(u[i:end])), line: lx.line[i], col: lx.col[i]}
	}
}

// lineCommentEnd returns the end of a "--" comment starting at i, which must end with a
// line break to be one, or 0.
func lineCommentEnd(u []uint16, i int) int {
	if i+1 >= len(u) || u[i+1] != '-' {
		return 0
	}
	for j := i + 2; j < len(u); j++ {
		switch u[j] {
		case '\n':
			return j + 1
		case '\r':
			if j+1 < len(u) && u[j+1] == '\n' {
				return j + 2
			}
			return j + 1
		}
	}
	return 0
}

// blockCommentEnd returns the end of a block comment whose body starts at i, or 0.
func blockCommentEnd(u []uint16, i int) int {
	for j := i; j+1 < len(u); j++ {
		if u[j] == '*' && u[j+1] == '/' {
			return j + 2
		}
	}
	return 0
}

// match returns the kind and end of the longest token at i (a keyword over an
// identifier, an integer over a float of the same length), or reports the lexical error.
func (lx *lexer) match(i int) (int, int) {
	u := lx.u
	n := len(u)
	at := func(j int) uint16 {
		if j < n {
			return u[j]
		}
		return 0
	}
	c := u[i]
	switch c {
	case '=':
		return kindEq, i + 1
	case '(':
		return kindLParen, i + 1
	case ')':
		return kindRParen, i + 1
	case ',':
		return kindComma, i + 1
	case '+':
		return kindPlus, i + 1
	case '-':
		return kindMinus, i + 1
	case '<':
		switch at(i + 1) {
		case '>':
			return kindNe, i + 2
		case '=':
			return kindLe, i + 2
		}
		return kindLt, i + 1
	case '>':
		if at(i+1) == '=' {
			return kindGe, i + 2
		}
		return kindGt, i + 1
	case '\'':
		return lx.matchString(i)
	}
	if isIDStart(c) {
		j := i + 1
		for j < n && isIDPart(u[j]) {
			j++
		}
		if k, ok := keywords[upperASCII(u[i:j])]; ok {
			return k, j
		}
		return kindID, j
	}
	if isDigit(c) || c == '.' {
		return lx.matchNumber(i)
	}
	lx.fail(i, i, i == n-1)
	return -1, 0
}

// matchString matches a quoted string (a doubled quote stands for one): the longest quoted text that ends with a
// quote. A text whose quote is never closed is an error at the end of the input.
func (lx *lexer) matchString(i int) (int, int) {
	u := lx.u
	last := -1
	for j := i + 1; j < len(u); j++ {
		if u[j] != '\'' {
			continue
		}
		last = j // a complete literal ends here; '' continues it
		if j+1 < len(u) && u[j+1] == '\'' {
			j++
			continue
		}
		break
	}
	if last < 0 {
		lx.fail(i, len(u)-1, true)
	}
	return kindString, last + 1
}

// matchNumber matches DECIMAL_LITERAL ("0" | [1-9][0-9]* [lL]?) or
// FLOATING_POINT_LITERAL (digits "." digits? exp? | "." digits exp? | digits exp).
func (lx *lexer) matchNumber(i int) (int, int) {
	u := lx.u
	n := len(u)
	digits := func(j int) int {
		for j < n && isDigit(u[j]) {
			j++
		}
		return j
	}
	exponent := func(j int) int { // the end of an exponent at j, or j
		if j < n && (u[j] == 'e' || u[j] == 'E') {
			k := j + 1
			if k < n && (u[k] == '+' || u[k] == '-') {
				k++
			}
			if e := digits(k); e > k {
				return e
			}
		}
		return j
	}
	decEnd := -1
	if u[i] == '0' {
		decEnd = i + 1
	} else if isDigit(u[i]) {
		decEnd = digits(i)
		if decEnd < n && (u[decEnd] == 'l' || u[decEnd] == 'L') {
			decEnd++
		}
	}
	floatEnd := -1
	intEnd := digits(i)
	switch {
	case intEnd > i && intEnd < n && u[intEnd] == '.':
		floatEnd = exponent(digits(intEnd + 1))
	case intEnd > i:
		if e := exponent(intEnd); e > intEnd {
			floatEnd = e
		}
	default: // "." digits
		if f := digits(i + 1); f > i+1 {
			floatEnd = exponent(f)
		}
	}
	switch {
	case floatEnd > decEnd:
		return kindFloat, floatEnd
	case decEnd > 0:
		return kindDecimal, decEnd
	}
	// A "." not followed by a digit: the automaton read the character after it.
	if i+1 < n {
		lx.fail(i, i+1, i+1 == n-1)
	}
	lx.fail(i, i, true)
	return -1, 0
}

// fail reports a lexical error as 4.9.8's token manager words it: the token began at
// start, the automaton read up to last, and eof tells whether it then met the end of
// the input (the error is then "<EOF>" one column further, or at column 0 of the next
// line after a line break).
func (lx *lexer) fail(start, last int, eof bool) {
	curPos := last - start + 1
	line, col := lx.line[last], lx.col[last]
	cur := lx.u[last]
	var msg string
	if eof {
		after := ""
		if curPos > 1 {
			after = javaEscape(lx.u[start : last+1])
		}
		if cur == '\n' || cur == '\r' {
			line, col = line+1, 0
		} else {
			col++
		}
		msg = "Lexical error at line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col) +
			".  Encountered: <EOF> after : \"" + after + "\""
	} else {
		after := ""
		if curPos > 1 {
			after = javaEscape(lx.u[start:last])
		}
		msg = "Lexical error at line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col) +
			".  Encountered: \"" + javaEscape(lx.u[last:last+1]) + "\" (" + strconv.Itoa(int(cur)) +
			"), after : \"" + after + "\""
	}
	lx.lexErr = &javaException{text: classTokenMgrError + ": " + msg}
	panic(lx.lexErr)
}

func isDigit(c uint16) bool { return c >= '0' && c <= '9' }
func isIDStart(c uint16) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}
func isIDPart(c uint16) bool { return isIDStart(c) || isDigit(c) }

func upperASCII(u []uint16) string {
	b := make([]byte, len(u))
	for i, c := range u {
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		b[i] = byte(c)
	}
	return string(b)
}

// javaEscape escapes UTF-16 text as JavaCC's add_escapes does.
func javaEscape(u []uint16) string {
	var b []byte
	for _, c := range u {
		switch c {
		case 0:
		case '\b':
			b = append(b, `\b`...)
		case '\t':
			b = append(b, `\t`...)
		case '\n':
			b = append(b, `\n`...)
		case '\f':
			b = append(b, `\f`...)
		case '\r':
			b = append(b, `\r`...)
		case '"':
			b = append(b, `\"`...)
		case '\'':
			b = append(b, `\'`...)
		case '\\':
			b = append(b, `\\`...)
		default:
			if c < 0x20 || c > 0x7e {
				h := strconv.FormatUint(uint64(c), 16)
				b = append(b, `\u`...)
				for range 4 - len(h) {
					b = append(b, '0')
				}
				b = append(b, h...)
			} else {
				b = append(b, byte(c))
			}
		}
	}
	return string(b)
}
