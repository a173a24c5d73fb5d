// Package control lets another process drive a running fake cluster (package
// fakebroker) over HTTP: the life cycle of each broker, fault injection, producing
// messages and reading offsets, messages and members. The standalone command
// test/fakebroker/cmd/fakebroker serves it with -control; the reliability suite drives it
// with Client.
//
// The endpoint speaks JSON:
//
//	GET  /brokers                         []BrokerInfo
//	POST /brokers/{name}/{action}         action: stop start kill pause resume
//	                                      close-connections clear-faults
//	POST /brokers/{name}/faults           a FaultSpec: {"code":11,"fail":2,"for":"5s"}
//	POST /namesrv/{action}                the name server; the same actions
//	POST /produce                         a ProduceRequest → {"count":2}
//	GET  /offsets?group=g&topic=t         []QueueOffsets
//	GET  /messages?topic=t[&limit=n]      []StoredMessage
//	GET  /clients?group=g                 {"broker-a":["clientId",...]}
//
// Errors are answered with a 4xx or 5xx status and {"error": "..."}. The endpoint has no
// authentication: serve it on a loopback address only (CheckAddr).
package control
