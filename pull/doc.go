// Package pull is the pull service: ONE goroutine that drains a queue of pull requests
// (one per assigned message queue), applies flow control, and issues asynchronous
// long-poll pulls. The broker's answer, handled on the connection's read loop, decodes the
// messages, filters them by tag, caches them in the queue's ProcessQueue, hands them to
// the Dispatcher (the consume service) and puts the request back in the queue, now or
// after a delay: 50 ms under local flow control, 20 ms when the broker answers
// FLOW_CONTROL, 1 s after any other error or while paused.
//
// The goroutine never blocks on the network or on consumers: pulls are asynchronous,
// the Dispatcher must not block, and delayed re-queues wait in a heap the goroutine
// serves with one timer. Nothing is started per queue or per pull.
package pull
