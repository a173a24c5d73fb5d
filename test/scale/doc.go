// Package scale measures what one process pays for many queues (issue 15, "scale in one
// process"): consumers subscribed to many topics (250 topics × 8 queues over two
// brokers, 2,000 queues each), one per group, started one after the other in this
// process. Run reports each Start, each first rebalance pass (inside Start), the
// heartbeat's size and round trip, the steady rebalance pass, and the process's
// goroutines, RSS, CPU and the requests the cluster received while idle.
//
// The command cmd/scale runs the sizes against a fake cluster in a child
// process and prints a table; TestGoroutinesDoNotGrowWithQueues asserts, at CI size, that
// the goroutines a consumer adds do not grow with its queues. Neither asserts a time.
package scale
