// Package rebalance decides which message queues this consumer client consumes.
//
// It holds the allocation strategies of Java's client/consumer/rebalance package
// (allocate*.go): pure functions of the group's sorted queue and client-id lists, with
// Java's names and Java's exact results, so Java and rmqpush clients of one consumer
// group agree on who consumes what; they start no goroutine, hold no mutable state and
// are safe for concurrent use.
//
// And the Rebalancer, which runs a pass every interval (20 s), on Trigger (a broker's
// NOTIFY_CONSUMER_IDS_CHANGED, a route change, resume) and after a pass that could not
// finish: it computes this client's queues with the strategy, releases the queues it
// lost (waiting for their listener calls, persisting and forgetting their offsets,
// unlocking them for orderly consumption), restarts queues whose offset the broker
// corrected or an admin reset, and creates a ProcessQueue and a pull request for each
// queue it gained (after a takeover grace when the group has other members).
//
// Goroutines and locks: the Rebalancer's loop goroutine (Start, ended by Stop) runs the
// passes, one at a time under passMu; a pass fans out to at most 16 goroutines to drop
// queues and one per broker to create them, and waits for them. mu guards the table of
// pull requests, which readers (ProcessQueues, Requests, Queues) copy.
package rebalance
