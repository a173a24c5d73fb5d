package consumer

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rmqpush/rmqpush/internal/protocol"
)

// Selector chooses which messages of a topic a subscription receives.
type Selector struct {
	kind string // protocol.ExpressionTypeTag or ExpressionTypeSQL92
	expr string
}

// All selects every message of the topic.
func All() Selector { return Selector{kind: protocol.ExpressionTypeTag, expr: "*"} }

// Tags selects the messages with any of the given tags. No tags selects everything.
func Tags(tags ...string) Selector {
	if len(tags) == 0 {
		return All()
	}
	return Selector{kind: protocol.ExpressionTypeTag, expr: strings.Join(tags, " || ")}
}

// TagExpression selects by a Java tag expression: "*", or tags separated by "||".
func TagExpression(expr string) Selector {
	return Selector{kind: protocol.ExpressionTypeTag, expr: expr}
}

// SQL92 selects by an SQL92 expression over message properties (Java's
// MessageSelector.bySql), e.g. "region IN ('eu', 'us') AND amount > 100": the brokers
// filter, so they must run with enablePropertyFilter=true; Start fails with a
// *SubscriptionRefusedError when one does not, or cannot parse the expression.
// Properties are strings on the broker: compared with a number, a property is parsed as
// that number's type (an int for 100, a double for 100.0), and a message whose property
// does not parse is not delivered. Subscribe refuses an empty expression and an
// unterminated string literal.
func SQL92(expr string) Selector {
	return Selector{kind: protocol.ExpressionTypeSQL92, expr: expr}
}

// checkSQL92 finds the errors in an SQL92 expression that need no parser: nothing but
// white space and comments, or a quote never closed. The brokers judge the rest.
func checkSQL92(expr string) error {
	empty := true
	for i := 0; i < len(expr); i++ {
		switch c := expr[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
		case strings.HasPrefix(expr[i:], "--"): // to the end of the line
			for i < len(expr) && expr[i] != '\n' && expr[i] != '\r' {
				i++
			}
		case strings.HasPrefix(expr[i:], "/*"):
			end := strings.Index(expr[i+2:], "*/")
			if end < 0 {
				return fmt.Errorf("the comment at byte %d of the SQL92 expression is never closed", i)
			}
			i += end + 3
		case c == '\'':
			empty = false
			j := i + 1
			for ; j < len(expr); j++ {
				if expr[j] == '\'' {
					if j+1 < len(expr) && expr[j+1] == '\'' {
						j++ // a doubled quote stands for one
						continue
					}
					break
				}
			}
			if j >= len(expr) {
				return fmt.Errorf("the string literal at byte %d of the SQL92 expression is never closed", i)
			}
			i = j
		default:
			empty = false
		}
	}
	if empty {
		return errors.New("the SQL92 expression is empty")
	}
	return nil
}

// String returns the selector's expression.
func (s Selector) String() string {
	if s.kind == protocol.ExpressionTypeSQL92 {
		return "SQL92(" + s.expr + ")"
	}
	return s.expr
}
