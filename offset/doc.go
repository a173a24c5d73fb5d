// Package offset keeps consume offsets: the next queue offset to consume, per queue.
//
// A clustering consumer keeps its offsets on the broker (RemoteStore, through the small
// BrokerAPI it declares); a broadcasting consumer keeps them in a local file (LocalStore).
// Both hold the current offsets in memory, where the consume path updates them, and write
// them out when their owner persists (every 5 s, on queue removal and on shutdown). Only
// offsets that changed since their last successful persist are written by PersistAll, so
// an idle consumer sends nothing; a failed persist keeps the value for the next round.
//
// The stores start no goroutines; their owner drives persistence.
package offset
