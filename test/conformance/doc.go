// Package conformance checks test/fakebroker against a RocketMQ client that rmqpush did
// not write: github.com/apache/rocketmq-client-go/v2 (the "peer"), pinned in this nested
// module's go.mod. It is the only place in the repository that imports the peer.
//
// The fake broker is the backbone of rmqpush's own tests, and rmqpush's decoders were
// written by the same hands as the fake's encoders: a shared misreading of the protocol
// would pass every test of the root module. Here the peer's producer and push consumer
// talk to a fake cluster over loopback, and the tests check the outcome twice: through
// the peer's callbacks (what it received) and through the fake broker's inspection API
// (what the fake stored, committed, locked and registered). A test that passes is
// evidence that the fake speaks RocketMQ as a real client expects, not a private
// dialect.
//
// The scenarios, one file each:
//
//   - producer_test.go: single and batch sends to two brokers; the stored records
//     decode with the topic, tags, keys, properties and bodies sent, at the queue and
//     offset the send result names;
//   - clustering_test.go: two consumers of one group share 8 queues on 2 brokers;
//     every message is consumed and the committed offsets reach the queues' max offsets;
//   - broadcasting_test.go: two broadcasting consumers each get every message;
//   - retry_test.go: RECONSUME_LATER sends messages back (CONSUMER_SEND_MSG_BACK);
//     they come back through %RETRY%<group> and land in %DLQ%<group> after the max;
//   - orderly_test.go: an orderly consumer locks its queues on the brokers, gets each
//     queue's messages in order, and unlocks them when it shuts down;
//   - membership_test.go: a member leaves and another joins; NOTIFY_CONSUMER_IDS_CHANGED
//     reaches the members and the queues are redistributed.
//
// bench_smoke_test.go is different: it runs the benchmark harness of cmd/bench (see
// internal/benchrun) with tiny figures so that it cannot rot.
//
// The tests run in parallel, each on its own cluster with its own group names. TestMain
// checks at the end that the fake broker left no goroutine behind (the peer leaves some
// by design; see main_test.go). The peer's global logger is replaced by a quiet one
// that also counts the notifications the peer reports receiving.
//
// The peer has data races of its own, so the tests that start its push consumer skip
// themselves under the race detector; README.md lists the races. Run from this
// directory:
//
//	go vet ./... && go test ./...
package conformance
