package remoting

// SerializeType is the header serialization of a frame: the top byte of its second word.
type SerializeType byte

// Header serializations. A peer may answer in either, so both are always decoded.
const (
	SerializeJSON     SerializeType = 0
	SerializeRocketMQ SerializeType = 1
)

// String returns the name Java uses for the serialization.
func (s SerializeType) String() string {
	switch s {
	case SerializeJSON:
		return "JSON"
	case SerializeRocketMQ:
		return "ROCKETMQ"
	default:
		return "UNKNOWN"
	}
}

// LanguageCode is the language a peer reports (Java's LanguageCode ordinal).
type LanguageCode byte

// Language codes.
const (
	LanguageJava    LanguageCode = 0
	LanguageCPP     LanguageCode = 1
	LanguageDotNet  LanguageCode = 2
	LanguagePython  LanguageCode = 3
	LanguageDelphi  LanguageCode = 4
	LanguageErlang  LanguageCode = 5
	LanguageRuby    LanguageCode = 6
	LanguageOther   LanguageCode = 7
	LanguageHTTP    LanguageCode = 8
	LanguageGo      LanguageCode = 9
	LanguagePHP     LanguageCode = 10
	LanguageOMS     LanguageCode = 11
	LanguageRust    LanguageCode = 12
	LanguageNodeJS  LanguageCode = 13
	LanguageUnknown LanguageCode = 255
)

// String returns the name Java gives the language ("JAVA", "GO", ...), which is what a
// JSON header carries, or "UNKNOWN" for a code Java does not name.
func (l LanguageCode) String() string {
	switch l {
	case LanguageJava:
		return "JAVA"
	case LanguageCPP:
		return "CPP"
	case LanguageDotNet:
		return "DOTNET"
	case LanguagePython:
		return "PYTHON"
	case LanguageDelphi:
		return "DELPHI"
	case LanguageErlang:
		return "ERLANG"
	case LanguageRuby:
		return "RUBY"
	case LanguageOther:
		return "OTHER"
	case LanguageHTTP:
		return "HTTP"
	case LanguageGo:
		return "GO"
	case LanguagePHP:
		return "PHP"
	case LanguageOMS:
		return "OMS"
	case LanguageRust:
		return "RUST"
	case LanguageNodeJS:
		return "NODE_JS"
	default:
		return "UNKNOWN"
	}
}

// LanguageByName returns the language with Java's name name (case-sensitive, as Java's
// enum is), or LanguageUnknown for a name it does not know: a peer with a newer language
// list is not an error.
func LanguageByName(name string) LanguageCode {
	switch name {
	case "JAVA":
		return LanguageJava
	case "CPP":
		return LanguageCPP
	case "DOTNET":
		return LanguageDotNet
	case "PYTHON":
		return LanguagePython
	case "DELPHI":
		return LanguageDelphi
	case "ERLANG":
		return LanguageErlang
	case "RUBY":
		return LanguageRuby
	case "OTHER":
		return LanguageOther
	case "HTTP":
		return LanguageHTTP
	case "GO":
		return LanguageGo
	case "PHP":
		return LanguagePHP
	case "OMS":
		return LanguageOMS
	case "RUST":
		return LanguageRust
	case "NODE_JS":
		return LanguageNodeJS
	default:
		return LanguageUnknown
	}
}

// Flag bits of a command.
const (
	FlagResponse int32 = 1 << 0
	FlagOneway   int32 = 1 << 1
)

// Version is the protocol version rmqpush reports: V4_9_8's ordinal in Java's MQVersion.
const Version int32 = 409

// Field is one extFields entry. All values are strings on the wire.
type Field struct {
	Key   string // the header field's name
	Value string // its value, as text
}

// Fields holds a command's extFields in wire order. A command has a handful of fields,
// so a list is smaller and faster than a map, and it keeps the order a peer sent, and any
// repeated key, which lets a decoded header be re-encoded byte for byte.
type Fields []Field

// Get returns the value for key and whether it is present. When a decoded header repeats
// a key (Java 4.9's ROCKETMQ encoding of fast-codec headers writes some fields twice), the
// last entry wins, as it does in the HashMap Java decodes into.
func (f Fields) Get(key string) (string, bool) {
	for i := len(f) - 1; i >= 0; i-- {
		if f[i].Key == key {
			return f[i].Value, true
		}
	}
	return "", false
}

// Value returns the value for key, or "" when it is absent.
func (f Fields) Value(key string) string {
	v, _ := f.Get(key)
	return v
}

// Set sets key to value: every existing entry for key takes the value (so a repeated key
// keeps its positions), or a new entry is appended.
func (f *Fields) Set(key, value string) {
	found := false
	for i := range *f {
		if (*f)[i].Key == key {
			(*f)[i].Value = value
			found = true
		}
	}
	if !found {
		*f = append(*f, Field{Key: key, Value: value})
	}
}

// Delete removes key.
func (f *Fields) Delete(key string) {
	kept := (*f)[:0]
	for _, e := range *f {
		if e.Key != key {
			kept = append(kept, e)
		}
	}
	*f = kept
}

// Command is one remoting frame: a request, a oneway request or a response.
//
// Code is the request code of a request and the response code of a response. Opaque
// pairs a response with its request on one connection; Client and Server assign it to
// the requests they send. ExtFields carries the typed header of the request or response
// (see internal/protocol). Body is the frame's payload, which for a decoded frame slices
// into the buffer it was read into.
type Command struct {
	Code      int32        // request code, or response code
	Language  LanguageCode // the sender's language (GO for ours)
	Version   int32        // the sender's protocol version (409 for ours)
	Opaque    int32        // pairs a response with its request
	Flag      int32        // FlagResponse and FlagOneway bits
	Remark    string       // a response's error text
	ExtFields Fields       // the typed header, as name/value pairs
	Body      []byte       // the payload

	// Serialize is the header serialization the command arrived in, or the one to
	// encode it in. Client and Server set it for the commands they send.
	Serialize SerializeType
}

// NewRequest returns a request with the given code and fields, from language GO at
// rmqpush's protocol version.
func NewRequest(code int32, fields Fields, body []byte) *Command {
	return &Command{Code: code, Language: LanguageGo, Version: Version, ExtFields: fields, Body: body}
}

// NewResponse returns a response to req with the given code and remark, in req's
// serialization and with req's opaque.
func NewResponse(req *Command, code int32, remark string) *Command {
	return &Command{
		Code:      code,
		Language:  LanguageGo,
		Version:   Version,
		Opaque:    req.Opaque,
		Flag:      FlagResponse,
		Remark:    remark,
		Serialize: req.Serialize,
	}
}

// IsResponse reports whether the command is a response.
func (c *Command) IsResponse() bool { return c.Flag&FlagResponse != 0 }

// IsOneway reports whether the command is a request that expects no response.
func (c *Command) IsOneway() bool { return c.Flag&FlagOneway != 0 }
