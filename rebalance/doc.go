// Package rebalance decides which message queues this consumer client consumes.
//
// It holds the allocation strategies of Java's client/consumer/rebalance package
// (allocate*.go): pure functions of the group's sorted queue and client-id lists, with
// Java's names and Java's exact results, so Java and rmqpush clients of one consumer
// group agree on who consumes what. It will also hold the Rebalancer, which runs every
// 20 s and on NOTIFY_CONSUMER_IDS_CHANGED: it computes this client's queues with the
// configured strategy, drops the queues it lost (persisting and removing their offsets,
// unlocking them for orderly consumption) and creates a ProcessQueue and a pull request
// for each queue it gained.
//
// The strategies start no goroutine, hold no mutable state and are safe for concurrent
// use.
package rebalance
