package protocol

import "strconv"

// CMResult is the outcome of CONSUME_MESSAGE_DIRECTLY (Java's CMResult enum).
type CMResult int32

// Results, in Java's ordinal order.
const (
	CRSuccess CMResult = iota
	CRLater
	CRRollback
	CRCommit
	CRThrowException
	CRReturnNull
)

// String returns Java's enum name, e.g. "CR_SUCCESS".
func (r CMResult) String() string {
	switch r {
	case CRSuccess:
		return "CR_SUCCESS"
	case CRLater:
		return "CR_LATER"
	case CRRollback:
		return "CR_ROLLBACK"
	case CRCommit:
		return "CR_COMMIT"
	case CRThrowException:
		return "CR_THROW_EXCEPTION"
	case CRReturnNull:
		return "CR_RETURN_NULL"
	}
	return "CMResult(" + strconv.Itoa(int(r)) + ")"
}

func parseCMResult(v Value) (CMResult, error) {
	if v.kind == KindNumber {
		n, err := v.Int32()
		if err != nil {
			return 0, err
		}
		if n < int32(CRSuccess) || n > int32(CRReturnNull) {
			return 0, v.errorf("consume result ordinal " + strconv.Itoa(int(n)) + " is not a CMResult")
		}
		return CMResult(n), nil
	}
	s, err := v.Str()
	if err != nil {
		return 0, err
	}
	for r := CRSuccess; r <= CRReturnNull; r++ {
		if r.String() == s {
			return r, nil
		}
	}
	return 0, v.errorf("consume result " + strconv.Quote(s) + " is not a CMResult")
}

// ConsumeMessageDirectlyResult is a client's answer to CONSUME_MESSAGE_DIRECTLY (309).
type ConsumeMessageDirectlyResult struct {
	Order          bool
	AutoCommit     bool
	ConsumeResult  CMResult // written as the enum name; read as the name or the ordinal
	Remark         string
	SpentTimeMills int64 // sic: Java's spelling
}

// Encode writes the body as Java does.
func (r *ConsumeMessageDirectlyResult) Encode(style Style) []byte {
	w := NewWriter(style)
	w.BeginObject()
	w.Key("autoCommit")
	w.Bool(r.AutoCommit)
	w.Key("consumeResult")
	w.Str(r.ConsumeResult.String())
	w.Key("order")
	w.Bool(r.Order)
	if r.Remark != "" {
		w.Key("remark")
		w.Str(r.Remark)
	}
	w.Key("spentTimeMills")
	w.Int(r.SpentTimeMills)
	w.EndObject()
	return w.Bytes()
}

// Decode reads the body from a Java client (enum name) or a Go one (ordinal).
func (r *ConsumeMessageDirectlyResult) Decode(data []byte) error {
	const name = "ConsumeMessageDirectlyResult"
	root, err := parseBody(name, data)
	if err != nil {
		return err
	}
	*r = ConsumeMessageDirectlyResult{}
	return bodyErr(name, root.Fields(func(field string, v Value) error {
		var err error
		switch field {
		case "order":
			r.Order, err = v.Bool()
		case "autoCommit":
			r.AutoCommit, err = v.Bool()
		case "consumeResult":
			if !v.IsNull() {
				r.ConsumeResult, err = parseCMResult(v)
			}
		case "remark":
			r.Remark, err = v.Str()
		case "spentTimeMills":
			r.SpentTimeMills, err = v.Int64()
		}
		return at(field, err)
	}))
}
