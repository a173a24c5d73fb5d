package message

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrSizeLimit is the cause of a DecodeError when decoding a body would produce more than
// the Decoder's MaxDecodedSize: a decompressed body (a zip bomb, or a genuinely huge
// message) or an inner batch with more messages than the limit pays for. Raising the
// limit is the only remedy; test for it with errors.Is.
var ErrSizeLimit = errors.New("message: decoded size limit exceeded")

// DecodeError reports a record of a store-format body (or an entry of a client batch
// body) that could not be decoded. Decoding stops there: the messages before it are
// returned along with the error.
type DecodeError struct {
	// Offset is the byte offset of the bad record (or batch entry) within the body that
	// was being decoded.
	Offset int
	// Field names what was wrong, e.g. "storeSize", "magic", "body length", "bornHost",
	// "body" (decompression) or "inner batch".
	Field string
	// Err says what was wrong with the field. It mentions the field and its value.
	Err error

	entry bool // a client batch entry rather than a store record
}

// Error returns e.g. "message: record at byte 540: body length 9999 exceeds the 100
// bytes left".
func (e *DecodeError) Error() string {
	what := "record"
	if e.entry {
		what = "batch entry"
	}
	return "message: " + what + " at byte " + strconv.Itoa(e.Offset) + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// fieldError is the failure of one field inside a record, before the record's offset is
// known to the code that found it.
type fieldError struct {
	field string
	err   error
}

func failf(field, format string, args ...any) *fieldError {
	return &fieldError{field: field, err: fmt.Errorf(format, args...)}
}

func (fe *fieldError) at(offset int, entry bool) *DecodeError {
	return &DecodeError{Offset: offset, Field: fe.field, Err: fe.err, entry: entry}
}
