// Package protocol is the RocketMQ remoting protocol as data: request and response
// codes, typed request and response headers (each with Encode and Decode over the
// command's extFields), the JSON bodies a push consumer, a producer, a name server and
// a broker exchange, and a JSON reader and writer that handle fastjson's non-standard
// output.
//
// Nothing here does I/O, logs or starts goroutines: the package turns values into
// extFields and bytes and back, and reports what was wrong, and where, when the input
// is bad.
//
// # Headers
//
// Each header type mirrors one Java CommandCustomHeader. Encode writes the exact Java
// ext-field names, integers in decimal and booleans as "true"/"false". Decode checks
// every field: a required field (Java's @CFNotNull) that is missing, or a value that
// does not parse, is a *HeaderError naming the header, the field and the value; an
// optional field that is absent decodes to its zero value (or to an unset Optional
// where Java's null and the zero value mean different things).
//
// # JSON
//
// Name servers and brokers write bodies with fastjson, which is not strict JSON: a
// Map<Long,String> comes out with unquoted integer keys ({0:"127.0.0.1:10911"}) and a
// Map<MessageQueue,…> uses the queue's JSON object itself as the key
// ({{"brokerName":"b","queueId":0,"topic":"t"}:42}). Parse reads standard JSON and
// both quirks into a Value tree; numbers keep their literal text and are read as int64
// exactly, never through float64. Parsing is bounded: MaxDepth levels of nesting,
// MaxNumberLen digits per number, and memory linear in the input. Errors carry the
// byte offset.
//
// Writer writes JSON in one of three styles: StyleStandard (every key quoted; a
// non-string key is written as a string holding its JSON, as fastjson's
// WriteNonStringKeyAsString does), StyleFastjson (what fastjson writes by default, and
// what Java tools expect for queue-keyed maps), and StyleBrowserCompatible (what a name
// server sends to clients of version 401 or later: keys quoted, non-ASCII escaped as
// \uXXXX, longs beyond ±2^53 quoted).
//
// # Bodies
//
// Body types (TopicRouteData, HeartbeatData, ConsumerIDList, LockBatchRequest,
// ConsumerRunningInfo, ResetOffsetBody, ...) have Encode(Style) []byte and
// Decode([]byte) error. Decoders accept fields in any order, ignore unknown fields, and
// accept both the fastjson and the standard form of every quirk.
package protocol
