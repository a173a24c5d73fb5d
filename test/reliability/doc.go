// Package reliability is rmqpush's reliability suite: scenarios A–F of issue 8 run with
// real processes. The fake cluster runs in its own process (test/fakebroker's standalone
// command, driven through its -control endpoint), each consumer in its own process
// (cmd/relconsumer, which records every message it is handed before acknowledging it),
// and the orchestrator here kills, stops, restarts and faults them, waits until every
// message is recorded and every committed offset is at its queue's end, and then checks
// the record files: ids never recorded (lost), ids recorded more than once (duplicates),
// and each scenario's own targets.
//
//   - A: kill -9 churn: 3 consumers, one killed (SIGKILL) and replaced every few seconds.
//   - B: graceful churn: the same with SIGTERM (the process calls Shutdown(ctx)).
//   - C: broker restart: a broker stopped and started again (data kept), another killed
//     and started again; no duplicates, consumption resumed within 1 s.
//   - D: slow listener: one consumer, 8 queues, 20 ms and 200 ms per message: no process
//     queue dropped and re-created, no duplicates.
//   - E: poison message: one id always gets ReconsumeLater: its retries come back on time
//     with growing reconsume times, it reaches the DLQ, the rest of its queue is not held
//     back.
//   - F: network faults: connections dropped, pulls failing with SYSTEM_BUSY and
//     FLOW_CONTROL, a broker paused: nothing lost, no goroutine or heap growth.
//
// Run the CI version with `go test ./test/reliability/` and the full version, whose
// output is the table in README.md, with
//
//	go run ./test/reliability/cmd/reliability -scenario all -full
//
// Programs are built once with `go build` (without the race detector) into a temporary
// directory; each scenario's files (records, logs, stats) stay in its work directory.
//
// Goroutines: none of its own beyond the caller's; child processes are started with
// their output going to files, and every one is waited for before a scenario returns.
package reliability
