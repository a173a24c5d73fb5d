// Package benchrun is the benchmark's orchestrator, run by cmd/bench (and, with tiny
// figures, by the module's smoke test). It builds the worker programs and the standalone
// fake broker with `go build`, starts the fake cluster as its own process (unless it is
// given a real name server), creates and preloads topics, runs each client in a worker
// process of its own, alternating the clients run by run, and prints the figures each
// worker measured of itself, as Markdown tables.
//
// Scenarios:
//
//   - consume-all: N messages of a size preloaded over 8 queues (once per size), then
//     consumed from the first offset by a fresh group per run, with a listener that only
//     counts; each round is raw (the ceiling), then rmqpush and the peer at default
//     settings and tuned (pull batch 128, consume batch 32), the clients' order rotating
//     from round to round so that none always runs right after the raw puller;
//   - latency: one producer (this process, internal/client's SendMessage) at a steady
//     rate with the send time in each body; the worker records consume time minus send
//     time; a fresh topic per client run;
//   - idle: one consumer of a topic with 256 queues and no traffic; CPU, goroutines, RSS
//     and the requests per second it sends. The request counts come from the fake
//     broker's counters, so this scenario runs the fake in this process (a fake of its
//     own with only the worker connected to it); on a real cluster they are not
//     measured.
package benchrun
