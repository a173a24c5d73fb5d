package processqueue

// Info is a snapshot of a ProcessQueue with the fields of Java's ProcessQueueInfo, the
// per-queue entry of the consumer running info (GET_CONSUMER_RUNNING_INFO). Timestamps
// are milliseconds since the Unix epoch, as in Java. Encoding it is not this package's
// job.
type Info struct {
	// CommitOffset is the offset store's value for the queue; Snapshot leaves it 0 for
	// the caller to fill.
	CommitOffset int64

	// The cache (messages not taken by an orderly listener): first and last offset
	// (0 when empty) and count. CachedMsgSizeInMiB counts the taken messages too, as
	// Java's does.
	CachedMsgMinOffset int64 // first cached offset
	CachedMsgMaxOffset int64 // last cached offset
	CachedMsgCount     int32 // cached messages
	CachedMsgSizeInMiB int32 // their body size

	// The messages taken by an orderly listener and not yet committed (Java fills the
	// "transaction" fields from consumingMsgOrderlyTreeMap): first and last offset
	// (0 when none) and count.
	TransactionMsgMinOffset int64 // first taken offset
	TransactionMsgMaxOffset int64 // last taken offset
	TransactionMsgCount     int32 // taken messages

	Locked            bool  // orderly: the broker lock is held
	TryUnlockTimes    int64 // orderly: unlock attempts deferred by a running task
	LastLockTimestamp int64 // orderly: ms since the epoch of the last lock or renewal

	// Dropped is written "droped" by Java 4.9's fastjson and "dropped" by 5.x.
	Dropped              bool
	LastPullTimestamp    int64 // ms since the epoch of the last pull
	LastConsumeTimestamp int64 // ms since the epoch of the last listener call
}

// Snapshot returns the queue's state as Java's fillProcessQueueInfo reports it.
func (pq *ProcessQueue) Snapshot() Info {
	var info Info
	pq.mu.RLock()
	if first := pq.cache.Min(); first != nil {
		info.CachedMsgMinOffset, info.CachedMsgMaxOffset = first.off, pq.cache.Max().off
		info.CachedMsgCount = int32(pq.cache.Len())
	}
	info.CachedMsgSizeInMiB = int32(pq.size.Load() / (1 << 20))
	if first, ok := pq.taken.Min(); ok {
		last, _ := pq.taken.Max()
		info.TransactionMsgMinOffset, info.TransactionMsgMaxOffset = first.off, last.off
		info.TransactionMsgCount = int32(pq.taken.Len())
	}
	pq.mu.RUnlock()

	info.Locked = pq.locked.Load()
	info.TryUnlockTimes = pq.tryUnlockTimes.Load()
	info.LastLockTimestamp = pq.lastLock.Load() / 1e6
	info.Dropped = pq.dropped.Load()
	info.LastPullTimestamp = pq.lastPull.Load() / 1e6
	info.LastConsumeTimestamp = pq.lastConsume.Load() / 1e6
	return info
}

// OldestStoreTimestamp returns the store timestamp (ms since the Unix epoch) of the
// message at the smallest offset still cached or taken by an orderly listener — the
// oldest message not consumed yet — and false when there is none. Now minus it is the
// queue's consumer lag latency as the client sees it.
func (pq *ProcessQueue) OldestStoreTimestamp() (int64, bool) {
	pq.mu.RLock()
	defer pq.mu.RUnlock()
	first := pq.cache.Min()
	if taken, ok := pq.taken.Min(); ok && (first == nil || taken.off < first.off) {
		first = taken.e
	}
	if first == nil {
		return 0, false
	}
	return first.msg.StoreTimestamp, true
}
