package fakebroker

import (
	"time"

	"github.com/rmqpush/rmqpush/message"
)

// Queue locks of orderly consumers, as RebalanceLockManager keeps them: per group and
// queue, one client id, valid until it has not been renewed for the lock expiry (60 s).
// A lock request renews the locks the client holds, takes the free and expired ones, and
// leaves those another client holds; an unlock releases only the client's own. Locks
// live in memory: a restart loses them.

// maxLockEntries bounds the locks a broker keeps.
const maxLockEntries = 1 << 20

type lockEntry struct {
	clientID string
	last     time.Time
}

// tryLockBatch is RebalanceLockManager.tryLockBatch: the queues now locked by clientID,
// in request order. It runs under b.mu.
func (b *Broker) tryLockBatch(group string, mqs []message.Queue, clientID string, now time.Time) []message.Queue {
	locked := make([]message.Queue, 0, len(mqs))
	seen := make(map[message.Queue]bool, len(mqs))
	gl := b.locks[group]
	for _, mq := range mqs {
		if seen[mq] {
			continue
		}
		seen[mq] = true
		e := gl[mq]
		switch {
		case e == nil:
			if b.lockCount >= maxLockEntries {
				continue
			}
			if gl == nil {
				gl = make(map[message.Queue]*lockEntry)
				b.locks[group] = gl
			}
			gl[mq] = &lockEntry{clientID: clientID, last: now}
			b.lockCount++
		case e.clientID == clientID:
			e.last = now // renewed, expired or not
		case now.Sub(e.last) > b.cfg.lockExpiry:
			e.clientID, e.last = clientID, now
		default:
			continue // locked by another client
		}
		locked = append(locked, mq)
	}
	return locked
}

// unlockBatch is RebalanceLockManager.unlockBatch. It runs under b.mu.
func (b *Broker) unlockBatch(group string, mqs []message.Queue, clientID string) {
	gl := b.locks[group]
	for _, mq := range mqs {
		if e := gl[mq]; e != nil && e.clientID == clientID {
			delete(gl, mq)
			b.lockCount--
		}
	}
	if gl != nil && len(gl) == 0 {
		delete(b.locks, group)
	}
}
