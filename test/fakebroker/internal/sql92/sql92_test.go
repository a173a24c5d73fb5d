package sql92

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The cases below are facts about 4.9.8's filter module, established by running its
// parser and expressions (on OpenJDK 17) on the same inputs.

const expectingOperand = "Was expecting one of:\n    \"NOT\" ...\n    \"TRUE\" ...\n    \"FALSE\" ...\n" +
	"    \"NULL\" ...\n    <DECIMAL_LITERAL> ...\n    <FLOATING_POINT_LITERAL> ...\n    <STRING_LITERAL> ...\n" +
	"    <ID> ...\n    \"(\" ...\n    \"-\" ...\n    "

func TestCompileRefusesWith498Remarks(t *testing.T) {
	parse := "org.apache.rocketmq.filter.parser.ParseException: "
	lexical := "org.apache.rocketmq.filter.parser.TokenMgrError: Lexical error at line "
	for _, tc := range []struct{ expr, remark string }{
		// The golden capture's case (h_sql92 0232).
		{"a > AND", parse + "Encountered \" \"AND\" \"AND \"\" at line 1, column 5.\n" + expectingOperand},
		{"a = 1 AND", parse + "Encountered \"<EOF>\" at line 1, column 9.\n" + expectingOperand},
		{"   ", parse + "Encountered \"<EOF>\" at line 1, column 3.\n" + expectingOperand},
		{"", parse + "Encountered \"<EOF>\" at line 0, column 0.\n" + expectingOperand},
		{"a IS 5", parse + "Encountered \" <DECIMAL_LITERAL> \"5 \"\" at line 1, column 6.\nWas expecting:\n    \"NOT\" ...\n    "},
		{"a NOT x", parse + "Encountered \" \"NOT\" \"NOT \"\" at line 1, column 3.\nWas expecting one of:\n" +
			"    \"BETWEEN\" ...\n    \"IN\" ...\n    \">\" ...\n    \">=\" ...\n    \"<\" ...\n    \"<=\" ...\n    "},
		{"a IN ('x'", parse + "Encountered \"<EOF>\" at line 1, column 9.\nWas expecting one of:\n    \",\" ...\n    \")\" ...\n    "},
		// A unary + is checked by a lookahead: an error after it is reported at the +.
		{"+(a > )", parse + "Encountered \" \"+\" \"+ \"\" at line 1, column 1.\n" + expectingOperand},
		// Tabs count to the next multiple of 8; a line break starts column 1 of the next line.
		{"a\t>\r\n AND", parse + "Encountered \" \"AND\" \"AND \"\" at line 2, column 2.\n" + expectingOperand},
		{"5", parse + "Expression will not result in a boolean value: 5"},
		{"a AND 'x'", parse + "Expression will not result in a boolean value: 'x'"},
		{"-(a > 1)", parse + "Expression will not result in a boolean value: (- (a > 1))"},
		// Lexical errors: a character no token starts with; at the end of the input it is
		// reported as <EOF> one column further.
		{"a # b", lexical + "1, column 3.  Encountered: \"#\" (35), after : \"\""},
		{"a #", lexical + "1, column 4.  Encountered: <EOF> after : \"\""},
		{"a = 'abc", lexical + "1, column 9.  Encountered: <EOF> after : \"\\'abc\""},
		{"a = .x ", lexical + "1, column 6.  Encountered: \"x\" (120), after : \".\""},
		{"a = \u20ac ", lexical + "1, column 5.  Encountered: \"\\u20ac\" (8364), after : \"\""},
		{"a = 1 /* open", lexical + "1, column 14.  Encountered: <EOF> after : \"/* open\""},
		// The factories' checks.
		{"a > 'x'", "java.lang.RuntimeException: Value ''x'' cannot be compared."},
		{"a > TRUE", "java.lang.RuntimeException: Value 'TRUE' cannot be compared."},
		{"(a AND b) > 1", "java.lang.RuntimeException: Value '(a && b)' cannot be compared."},
		{"NULL = a", "java.lang.RuntimeException: 'NULL' cannot be compared."},
		{"TRUE = 1", "java.lang.RuntimeException: 'TRUE' cannot be compared with '1'"},
		{"a BETWEEN 2 AND 1", "java.lang.RuntimeException: Illegal values of between, left value(2) must less than or equal to right value(1)"},
		{"a BETWEEN TRUE AND FALSE", "java.lang.RuntimeException: Illegal values of between, left value(true) must less than or equal to right value(false)"},
		{"a BETWEEN NULL AND 1", "java.lang.RuntimeException: Illegal values of between, values can not be null!"},
		{"a BETWEEN 'x' AND 5", "java.lang.RuntimeException: java.lang.NumberFormatException: For input string: \"x\""},
		{"a BETWEEN 'x' AND TRUE", "java.lang.ClassCastException: class java.lang.Boolean cannot be cast to class java.lang.String " +
			"(java.lang.Boolean and java.lang.String are in module java.base of loader 'bootstrap')"},
		{"'x' IN ('a')", "java.lang.RuntimeException: Expected a property for In expression, got: 'x'"},
		// Literals: no long beyond 64 bits (so no Long.MIN_VALUE), no float that reads as 0.
		{"a = 9223372036854775808", "java.lang.NumberFormatException: For input string: \"9223372036854775808\""},
		{"a = -9223372036854775808", "java.lang.NumberFormatException: For input string: \"9223372036854775808\""},
		{"a = 0.0", "java.lang.RuntimeException: 0.0 is less than 4.9E-324"},
		{"a = 1e-400", "java.lang.RuntimeException: 1e-400 is less than 4.9E-324"},
		{"a = 1e400", "java.lang.RuntimeException: 1e400 is greater than 1.7976931348623157E308"},
		// From 5 elements on, IN keeps a HashSet, which orders them by hash.
		{"(a IN ('x','y','z','w','v','u')) > 1", "java.lang.RuntimeException: Value 'a IN ( u, v, w, x, y, z )' cannot be compared."},
		{"(a IN ('Aa','BB','C#','a','b')) > 1", "java.lang.RuntimeException: Value 'a IN ( Aa, BB, C#, a, b )' cannot be compared."},
		{"(a IN ('y','x','y')) > 1", "java.lang.RuntimeException: Value 'a IN ( y, x, y )' cannot be compared."},
	} {
		_, err := Compile(tc.expr)
		var e *Error
		require.ErrorAs(t, err, &e, "%q", tc.expr)
		require.Equal(t, tc.remark, e.Remark, "%q", tc.expr)
	}
}

func TestCompileAcceptsAs498(t *testing.T) {
	for _, tc := range []struct{ expr, compiled string }{
		{"a > 5 AND b = 'x'", "((a > 5) && (b == 'x'))"},
		// Nothing after a complete expression is read.
		{"a > 5 garbage", "(a > 5)"},
		{"a > 5 ) ) #", "(a > 5)"},
		{"a = 007", "(a == 0)"},
		{"a = 1 -- no line break ends this comment", "(a == 1)"},
		{"a = 1 -- comment\n OR b = 2", "((a == 1) || (b == 2))"},
		{"a /* c */ = /* d */ 1", "(a == 1)"},
		{"A = 1L or B = 2147483648", "((A == 1) || (B == 2147483648))"},
		{"a <> 'it''s'", "(NOT (a == 'it''s'))"},
		{"a IS NULL", "(a == NULL)"},
		{"a IS NOT NULL", "(NOT (a == NULL))"},
		{"a BETWEEN 1 AND 2.5", "((a >= 1) && (a <= 2.5))"},
		{"a NOT BETWEEN 5 AND 1", "((a < 5) || (a > 1))"},
		{"a IN ('x', 'y')", "a IN ( x, y )"},
		{"a NOT IN ('x')", "a NOT IN ( x )"},
		{"NOT a", "(NOT a)"},
		{"+a > -1.5e10", "(a > (- 1.5E10))"},
		{"a = 1234567.5 OR a = 0.001 OR a = 1e7", "(((a == 1234567.5) || (a == 0.001)) || (a == 1.0E7))"},
		{"TRUE", "TRUE"},
		{"NULL IS NULL", "(NULL == NULL)"},
		{"$x_1 = TAGS", "($x_1 == TAGS)"},
		{"a = -'x'", "(a == (- 'x'))"},
	} {
		e, err := Compile(tc.expr)
		require.NoError(t, err, "%q", tc.expr)
		require.Equal(t, tc.compiled, e.String(), "%q", tc.expr)
		require.Equal(t, tc.expr, e.Text())
	}
}

// props makes a Lookup of name=value pairs.
func props(kv ...string) Lookup {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

// fails stands for an evaluation that throws: the message does not match.
const fails Result = -1

func TestEvalAs498(t *testing.T) {
	for _, tc := range []struct {
		expr  string
		props []string
		want  Result
	}{
		{"a > 5", []string{"a", "6"}, True},
		{"a > 5", []string{"a", "+6"}, True},
		{"a > 5", []string{"a", "06"}, True},
		{"a > 5", []string{"a", "\u0666"}, True}, // an Arabic-Indic six: Java reads any decimal digit
		{"a > 5", []string{"a", "7.5"}, fails},   // an int literal parses the property as a Java int
		{"a > 5", []string{"a", "abc"}, fails},
		{"a > 5", []string{"a", " 7"}, fails},
		{"a > 5", []string{"a", "3000000000"}, fails},
		{"a > 3000000000", []string{"a", "3000000001"}, True},
		{"a > 5", nil, Unknown},
		{"a > 5.0", []string{"a", "7.5"}, True},
		{"a > 5.0", []string{"a", " 7.5d "}, True},
		{"a > 5.0", []string{"a", "0x1p3"}, True},
		{"a > 5.0", []string{"a", "NaN"}, True}, // NaN is above every number
		{"a = 5.0", []string{"a", "NaN"}, False},
		{"a = 5.0", []string{"a", "5"}, True},
		{"a = 5", []string{"a", "5.0"}, fails},
		{"a > b", []string{"a", "10", "b", "9.5"}, True}, // two properties: both read as doubles
		{"a > b", []string{"a", "x", "b", "1"}, fails},
		{"a = b", []string{"a", "10", "b", "10.0"}, False}, // = compares strings
		{"a = b", nil, True},                               // both missing
		{"a = b", []string{"a", "1"}, False},
		{"a = 'x'", []string{"a", "X"}, False},
		{"a <> 'x'", nil, Unknown},
		{"a <> 5", []string{"a", "abc"}, fails},
		{"a = TRUE", []string{"a", "True"}, True},
		{"a = FALSE", []string{"a", "anything"}, True},
		{"TRUE = a", []string{"a", "true"}, fails},
		{"a", []string{"a", "true"}, False}, // a property is a string, never a Boolean
		{"NOT a", []string{"a", "anything"}, True},
		{"NOT a", nil, Unknown},
		{"a IS NULL", nil, True},
		{"a IS NOT NULL", []string{"a", ""}, True},
		{"a IN ('x', 'y')", []string{"a", "y"}, True},
		{"a NOT IN ('x', 'y')", []string{"a", "z"}, True},
		{"a NOT IN ('x', 'y')", nil, Unknown},
		{"a BETWEEN 1 AND 10", []string{"a", "10"}, True},
		{"a NOT BETWEEN 1 AND 10", []string{"a", "11"}, True},
		{"-a < 0", []string{"a", "5"}, Unknown}, // negating a string gives null
		// AND and OR stop at the first deciding operand, left to right; a failure before
		// that fails the whole expression.
		{"a > 5 OR b = 'x'", []string{"a", "7.5", "b", "x"}, fails},
		{"b = 'x' OR a > 5", []string{"a", "7.5", "b", "x"}, True},
		{"b = 'x' AND a > 5", []string{"a", "7.5", "b", "y"}, False},
		{"a > 5 AND b = 'x'", []string{"a", "6"}, Unknown},
		{"NOT (a > 5)", []string{"a", "abc"}, fails},
		{"a > 5 garbage", []string{"a", "6"}, True},
		{"TAGS = 'TagA'", []string{"TAGS", "TagA"}, True},
	} {
		e, err := Compile(tc.expr)
		require.NoError(t, err, "%q", tc.expr)
		got, err := e.Eval(props(tc.props...))
		if tc.want == fails {
			require.Error(t, err, "%q %v", tc.expr, tc.props)
			require.False(t, e.Matches(props(tc.props...)))
			continue
		}
		require.NoError(t, err, "%q %v", tc.expr, tc.props)
		require.Equal(t, tc.want, got, "%q %v", tc.expr, tc.props)
		require.Equal(t, tc.want == True, e.Matches(props(tc.props...)))
	}
}

// The golden run h_sql92: of the 20 messages sent, "a > 5 AND b = 'x'" selected exactly
// goldenIndex 6, 8, 10, 14 and 19, for the Java and the Go consumer alike.
func TestGoldenSelection(t *testing.T) {
	data, err := os.ReadFile("testdata/h_sql92_sent.json")
	require.NoError(t, err)
	var sent []struct {
		Index          int               `json:"index"`
		UserProperties map[string]string `json:"userProperties"`
	}
	require.NoError(t, json.Unmarshal(data, &sent))
	require.Len(t, sent, 20)
	e, err := Compile("a > 5 AND b = 'x'")
	require.NoError(t, err)
	var got []int
	for _, m := range sent {
		if e.Matches(func(n string) (string, bool) { v, ok := m.UserProperties[n]; return v, ok }) {
			got = append(got, m.Index)
		}
	}
	require.Equal(t, []int{6, 8, 10, 14, 19}, got)
}

func TestBounds(t *testing.T) {
	deep := strings.Repeat("(", MaxDepth) + "a" + strings.Repeat(")", MaxDepth) + " > 1"
	_, err := Compile(deep)
	require.EqualError(t, err, "sql92: java.lang.StackOverflowError")
	ok := strings.Repeat("(", MaxDepth-1) + "a" + strings.Repeat(")", MaxDepth-1) + " > 1"
	_, err = Compile(ok)
	require.NoError(t, err)
	_, err = Compile(strings.Repeat("NOT ", MaxDepth) + "a")
	require.EqualError(t, err, "sql92: java.lang.StackOverflowError")
	// The lookahead of a unary + nests too.
	_, err = Compile(strings.Repeat("+(", MaxDepth) + "a" + strings.Repeat(")", MaxDepth))
	require.EqualError(t, err, "sql92: java.lang.StackOverflowError")

	long := "a = 1" + strings.Repeat(" OR a = 1", MaxNodes/4)
	_, err = Compile(long)
	require.ErrorContains(t, err, "operators and operands")
	_, err = Compile("a = '" + strings.Repeat("x", MaxLength) + "'")
	require.ErrorContains(t, err, "characters long")

	// The largest accepted expression is evaluated in bounded work.
	wide := "a = 1" + strings.Repeat(" OR a = 1", MaxNodes/4-2)
	e, err := Compile(wide)
	require.NoError(t, err)
	require.True(t, e.Matches(props("a", "1")))
}

func TestJavaNumbers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1", 1, true}, {" 1.5 ", 1.5, true}, {"1.5f", 1.5, true}, {"-.5", -.5, true}, {"5.", 5, true},
		{"1e3", 1000, true}, {"0x1.8p1", 3, true}, {"Infinity", 0, true}, {"1e", 0, false}, {"0x1", 0, false},
		{"1_0", 0, false}, {"inf", 0, false}, {"", 0, false}, {"+", 0, false}, {"1.5ff", 0, false},
	} {
		f, err := javaParseDouble(tc.in)
		if !tc.ok {
			require.Error(t, err, "%q", tc.in)
			continue
		}
		require.NoError(t, err, "%q", tc.in)
		if tc.in != "Infinity" {
			require.Equal(t, tc.want, f, "%q", tc.in)
		}
	}
	for in, want := range map[string]int64{"-2147483648": -2147483648, "+7": 7, "\u0663\u0662": 32} {
		n, err := javaParseInt(in)
		require.NoError(t, err, "%q", in)
		require.Equal(t, want, n)
	}
	for _, in := range []string{"2147483648", "-", "1.0", "\U0001D7CE"} {
		_, err := javaParseInt(in)
		require.Error(t, err, "%q", in)
	}
	for f, want := range map[float64]string{1e7: "1.0E7", 9999999: "9999999.0", 0.001: "0.001", 1e-4: "1.0E-4",
		-2.5e-10: "-2.5E-10", 100: "100.0"} {
		require.Equal(t, want, javaDouble(f), strconv.FormatFloat(f, 'g', -1, 64))
	}
	require.True(t, slices.Equal([]string{"u", "v", "w", "x", "y", "z"}, javaHashSetOrder([]string{"x", "y", "z", "w", "v", "u"})))
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{"a > 5 AND b = 'x'", "a IN ('x','y')", "a BETWEEN 1 AND 2", "NOT (a IS NULL)",
		"+(-a) > 1e3", "a = 'it''s' -- c\n", "/* c */ a <> TRUE"} {
		f.Add(s, "6", "x")
	}
	f.Fuzz(func(t *testing.T, expr, a, b string) {
		e, err := Compile(expr)
		if err != nil {
			var ce *Error
			if !strings.Contains(err.Error(), "sql92: ") || !asError(err, &ce) || ce.Remark == "" {
				t.Fatalf("%q: error without a remark: %v", expr, err)
			}
			return
		}
		lookup := props("a", a, "b", b, "TAGS", a)
		r1, err1 := e.Eval(lookup)
		r2, err2 := e.Eval(lookup)
		if r1 != r2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("%q: not deterministic", expr)
		}
		_ = e.String()
	})
}

func asError(err error, target **Error) bool {
	e, ok := err.(*Error)
	*target = e
	return ok
}

// BenchmarkEval evaluates the example's expression for one message.
func BenchmarkEval(b *testing.B) {
	e, err := Compile("region IN ('eu', 'us') AND amount > 100")
	if err != nil {
		b.Fatal(err)
	}
	lookup := props("region", "eu", "amount", "150")
	b.ReportAllocs()
	for b.Loop() {
		if !e.Matches(lookup) {
			b.Fatal("no match")
		}
	}
}

// BenchmarkCompile parses the golden run's expression.
func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile("a > 5 AND b = 'x'"); err != nil {
			b.Fatal(err)
		}
	}
}
