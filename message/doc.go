// Package message is the vocabulary every rmqpush layer speaks: a Message as a producer
// builds it, an Ext as a consumer receives it, the Queue it came from, property names,
// and the broker's store format (decode and encode) with its message ids.
//
// Decoding is built for the consume hot path: bodies slice into the pull response
// instead of being copied, the Ext values of one pull body share one allocation, and
// properties stay in their wire form until something reads them. The decoder never
// panics on bad input and never allocates by an unchecked length; a bad record ends the
// decode with an error naming its byte offset, after the records before it.
//
// The package imports no other rmqpush package and holds no state.
package message
