// Package processqueue holds ProcessQueue, the consumer's per-queue cache of pulled
// messages, with the exact offset rules of Java's ProcessQueue
// (client/.../impl/consumer/ProcessQueue.java, 4.9.x and 5.x).
//
// A ProcessQueue keeps the messages pulled from one message queue, ordered by queue
// offset in a B-tree, from the moment the pull service puts them until the consume
// service removes them (concurrent consumption) or commits them (orderly consumption).
// The cache tree holds each pull's messages as one run (a segment, keyed by its first
// offset), so a pull costs one tree insert and a consumed message none (see
// segments.go). The offset it returns from Remove or Commit is the offset the consumer
// may store: never past a message still cached, so no unconsumed message is ever
// acknowledged.
//
// # What it owns
//
//   - the cache tree (Java msgTreeMap) and, for orderly consumption, the taken set of
//     messages handed to the listener by Take (Java consumingMsgOrderlyTreeMap: a sorted
//     slice here, as it holds one listener call's batch; see taken.go);
//   - the message count and body-byte size of both, the highest offset seen, the
//     broker's max offset hint;
//   - the dropped and locked flags, the last pull, consume and lock times, the number of
//     failed unlock attempts;
//   - per-message consume-start times, so the consumer can find messages whose listener
//     call exceeded ConsumeTimeout without scanning the cache (see MarkConsumeStart and
//     Expired);
//   - the consume lock that an orderly consume task holds while the listener runs, so that
//     dropping the queue can wait for it (Java's consumeLock).
//
// # Goroutines and locks
//
// The package starts no goroutine. Every method is safe for concurrent use. One
// sync.RWMutex guards the cache tree, the taken set, the consume-start list, the
// highest offset seen and the "consuming" flag; counters, flags and timestamps are
// atomics and can be read without taking it. The consume lock is separate and never
// taken by this package.
//
// # Time
//
// Methods that compare times take the current time as an argument (PullExpired,
// LockExpired, Expired, ...), so callers and tests control the clock. Remove and Take
// stamp the last consume time with time.Now, as Java does; RemoveAt and TakeAt with a
// time the caller read anyway.
package processqueue
