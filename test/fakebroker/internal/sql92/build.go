package sql92

// The factories 4.9.8's parser calls as it reduces the grammar, with the checks they
// make. A check that fails throws at once, so the first error in parse order is the one
// reported, as in 4.9.8.

// asBoolean is SelectorParser.asBooleanExpression: a boolean expression as it is, a
// property cast to boolean, anything else refused.
func (p *parser) asBoolean(n node) node {
	if isBoolean(n) {
		return n
	}
	if prop, ok := n.(*property); ok {
		return p.add(&booleanCast{x: prop})
	}
	panic(&javaException{text: classParse + ": Expression will not result in a boolean value: " + n.String()})
}

// createEqual is ComparisonExpression.createEqual: NULL may not be an operand, and a
// boolean constant may not be compared with another kind of constant.
func (p *parser) createEqual(left, right node) node {
	checkEqualOperand(left)
	checkEqualOperand(right)
	lc, lok := left.(*constant)
	rc, rok := right.(*constant)
	if lok && rok && lc.boolean && !rc.boolean {
		panic(runtimeException("'" + left.String() + "' cannot be compared with '" + right.String() + "'"))
	}
	return p.add(&comparison{op: opEq, left: left, right: right})
}

func checkEqualOperand(n node) {
	if c, ok := n.(*constant); ok && c.v.k == kNull {
		panic(runtimeException("'" + n.String() + "' cannot be compared."))
	}
}

// isNull is createIsNull: an equality with the NULL constant, without createEqual's
// checks.
func (p *parser) isNull(left node) node {
	return p.add(&comparison{op: opEq, left: left, right: p.add(&constant{v: nullValue, boolean: true})})
}

// createOrdering is createGreaterThan and its siblings: each operand must be a number
// constant or not a constant, and not a boolean expression.
func (p *parser) createOrdering(op string, left, right node) node {
	checkLessThanOperand(left)
	checkLessThanOperand(right)
	return p.add(&comparison{op: op, left: left, right: right})
}

func checkLessThanOperand(n node) {
	if c, ok := n.(*constant); ok {
		switch c.v.k {
		case kInt, kLong, kDouble:
			return
		}
		panic(runtimeException("Value '" + n.String() + "' cannot be compared."))
	}
	if isBoolean(n) {
		panic(runtimeException("Value '" + n.String() + "' cannot be compared."))
	}
}

// createBetween is value >= low AND value <= high; constant bounds must not be null and
// must be in order (compared as 4.9.8 compares, conversions and their failures
// included).
func (p *parser) createBetween(v, low, high node) node {
	lc, lok := low.(*constant)
	hc, hok := high.(*constant)
	if lok && hok {
		if lc.v.k == kNull || hc.v.k == kNull {
			panic(runtimeException("Illegal values of between, values can not be null!"))
		}
		n, err := javaCompare(hc.v, lc.v)
		if err != nil {
			panic(err)
		}
		if n < 0 {
			panic(runtimeException("Illegal values of between, left value(" + lc.v.String() +
				") must less than or equal to right value(" + hc.v.String() + ")"))
		}
	}
	ge := p.createOrdering(opGe, v, low)
	le := p.createOrdering(opLe, v, high)
	return p.add(&logic{left: ge, right: le})
}

// createIn is createInFilter / createNotInFilter: the left side must be a property.
func (p *parser) createIn(left node, list []string, notIn bool) node {
	prop, ok := left.(*property)
	if !ok {
		panic(runtimeException("Expected a property for In expression, got: " + left.String()))
	}
	return p.add(newIn(prop, list, notIn))
}
