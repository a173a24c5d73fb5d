// Package msgtrace writes RocketMQ message traces, the records Java's enableMsgTrace
// produces and the RocketMQ Dashboard and `mqadmin queryMsgTraceById` read: a SubBefore
// and a SubAfter record per consumed message, encoded as Java's TraceDataEncoder does,
// batched and sent asynchronously to the trace topic (RMQ_SYS_TRACE_TOPIC by default)
// by a Dispatcher.
//
// The Dispatcher owns one goroutine, started by Start and ended by Close. Appending
// never blocks: records wait in a bounded buffer, and those that do not fit (the trace
// topic slow or unreachable) are dropped and counted.
package msgtrace
