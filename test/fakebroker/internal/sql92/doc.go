// Package sql92 compiles and evaluates RocketMQ SQL92 message selectors exactly as an
// Apache RocketMQ 4.9.8 broker does (its filter module: SelectorParser, the JavaCC
// token manager, ComparisonExpression, UnaryExpression, LogicExpression), so the fake
// broker filters pulls as a real one. It is written from 4.9.8's behaviour, not its
// code, and imports nothing of rmqpush's client side.
//
// # Grammar
//
// Identifiers name message properties (user and system ones, TAGS included):
// [a-zA-Z_$][a-zA-Z0-9_$]*. Literals: integers ("0" or [1-9][0-9]*, an optional L;
// int when they fit 32 bits, long otherwise), floating-point numbers (5.5, 5., .5,
// 5E10, ...), strings in single quotes (a doubled quote stands for one), TRUE, FALSE and NULL; keywords
// are case-insensitive. Operators: = <> > >= < <= [NOT] BETWEEN … AND …,
// [NOT] IN ('…', …), IS [NOT] NULL, AND, OR, NOT, unary + and -, parentheses; --
// comments to the end of a line and /* */ comments.
//
// # What 4.9.8 does that surprises
//
//   - Nothing after a complete expression is read: "a > 5 garbage" means "a > 5", and
//     "a = 007" means "a = 0".
//   - A property is a string. Compared with an integer it is parsed as a Java int (or
//     long, for a long literal): "7.5", "abc", " 7" and "3000000000" make the
//     comparison fail, and a failed comparison fails the whole expression, whatever
//     AND or OR around it would say (unless evaluation stopped earlier: AND and OR
//     evaluate left to right and stop at the first FALSE or TRUE). Compared with a
//     floating-point literal it is parsed as a Java double ("NaN" is greater than every
//     number, "7.5d" is 7.5). Two properties compared by < > <= >= are both parsed as
//     doubles; by = they are compared as strings.
//   - A property alone ("a", "a AND b") is never true, since its value is a string;
//     "NOT a" is true for every message that has the property; "a = TRUE" is true when
//     the value is "true" in any case, and "a = FALSE" for any other value; "TRUE = a"
//     is never true (4.9.8 fails on it).
//   - "a = b" is true when both properties are missing.
//   - A floating-point literal equal to zero (0.0, .0, 1e-400) is refused, as is an
//     integer beyond the long range (so Long.MIN_VALUE cannot be written).
//
// # Bounds
//
// An expression longer than MaxLength characters, nested deeper than MaxDepth (where
// 4.9.8 would run out of stack), or of more than MaxNodes operators and operands is
// refused: evaluating one costs at most MaxNodes steps per message.
package sql92
