package consumer

import (
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

// SQL92 selects by an SQL92 expression over message properties. rmqpush does not
// support SQL92 subscriptions yet: Subscribe refuses them with an error.
func SQL92(expr string) Selector {
	return Selector{kind: protocol.ExpressionTypeSQL92, expr: expr}
}

// String returns the selector's expression.
func (s Selector) String() string {
	if s.kind == protocol.ExpressionTypeSQL92 {
		return "SQL92(" + s.expr + ")"
	}
	return s.expr
}
