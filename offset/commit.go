package offset

import (
	"context"
	"time"

	"github.com/rmqpush/rmqpush/message"
)

// A queue's offset reaches the broker two ways: carried by a pull (its commit-offset
// flag) and by UPDATE_CONSUMER_OFFSET. A 4.9.8 broker runs the two on different thread
// pools and stores whichever it processes last, so an older offset sent first can be
// stored after a newer one sent later, moving the group's offset back ("[NOTIFYME]update
// consumer offset less than store" in its log); a handover or a crash then delivers the
// messages in between again. The remote store therefore lets one write of a queue's
// offset be in flight at a time, by either path: a pull carries the offset only while no
// update is unanswered (BeginPullCommit), and an update waits for (Persist) or skips
// (Flush, PersistAll) a queue whose commit-carrying pull is unanswered. A write whose
// fate is unknown (its connection failed) may still land: the queue counts as busy for
// unsureGrace after.
//
// A skipped queue is not forgotten: the commit hook (SetCommitHook) is called when an
// offset moves away from what the broker holds, and again when a write that ends
// (answered, or refused unread) leaves it still ahead, so the owner of the hook flushes
// once more. A write that failed or whose fate is unknown does not call it: the broker
// is in trouble, and the periodic persist writes the offset instead of a retry loop.

// unsureGrace is how long a write whose outcome is unknown keeps its queue busy (the
// table's grace; tests shorten it).
const unsureGrace = time.Second

// maxCommitWait bounds how long Persist waits for a queue's write in flight before it
// writes anyway (the table's maxWait): the write it waits for is a pull's, answered in
// milliseconds by a healthy broker, and writing late is never worse than not writing.
const maxCommitWait = time.Second

// CommitOutcome is what became of a pull that carried a commit offset.
type CommitOutcome int

const (
	// CommitStored: the broker answered the pull, so it processed (and, being a
	// master, stored) the offset.
	CommitStored CommitOutcome = iota
	// CommitNotStored: the broker refused the pull before reading the offset (an
	// error response), or the pull was never sent.
	CommitNotStored
	// CommitUnknown: the pull's connection failed or it timed out; the broker may
	// still process it.
	CommitUnknown
)

// PullCommit is a pull's claim on a queue's offset: the offset the pull carries, held
// from BeginPullCommit until EndPullCommit. The zero value claims nothing.
type PullCommit struct {
	q      message.Queue
	offset int64
	e      *entry // the entry claimed; another one means the queue was removed since
}

// Offset returns the offset the pull carries.
func (c PullCommit) Offset() int64 { return c.offset }

// busy reports whether a write of e's offset may still reach the broker. t.mu is held.
func (e *entry) busy(now time.Time) bool {
	return e.pulling || e.writing || now.Before(e.unsure)
}

// beginPull claims q's offset for a pull: ok when q has an offset above 0 and no write
// of it is in flight.
func (t *table) beginPull(q message.Queue) (PullCommit, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[q]
	if !ok || e.offset <= 0 || e.busy(time.Now()) {
		return PullCommit{}, false
	}
	e.pulling = true
	return PullCommit{q: q, offset: e.offset, e: e}, true
}

// endPull releases a pull's claim.
func (t *table) endPull(c PullCommit, outcome CommitOutcome) {
	if c.e == nil {
		return
	}
	t.mu.Lock()
	e := c.e
	e.pulling = false
	switch outcome {
	case CommitStored:
		e.persisted = c.offset
	case CommitUnknown:
		e.unsure = time.Now().Add(t.grace)
	}
	t.settledLocked()
	t.unlockCommit(c.q, e, outcome != CommitUnknown, false)
}

// unlockCommit unlocks t.mu and then, when ask and e (q's current entry) is ahead of the
// offset the broker holds, calls the commit hook. t.mu is held. current says that e is
// known to be q's entry under this hold of t.mu (looked up, or a live lease's remembered
// entry), so it is not looked up again.
func (t *table) unlockCommit(q message.Queue, e *entry, ask, current bool) {
	hook := t.commit
	ask = ask && hook != nil && e.offset != e.persisted && (current || t.entries[q] == e)
	t.mu.Unlock()
	if ask {
		hook()
	}
}

// settledLocked wakes the waiters for a queue to settle. t.mu is held.
func (t *table) settledLocked() {
	if t.settled != nil {
		close(t.settled)
		t.settled = nil
	}
}

// claimWrite claims q's offset for an update: it returns the offset to write, or ok
// false when q has none or, unless wait, a write of it is in flight. With wait it waits
// (within ctx, and at most maxCommitWait) for the write in flight to end first, then
// claims the offset anyway.
func (t *table) claimWrite(ctx context.Context, q message.Queue, wait bool) (*entry, int64, bool) {
	deadline := time.Now().Add(t.maxWait)
	for {
		t.mu.Lock()
		e, ok := t.entries[q]
		if !ok {
			t.mu.Unlock()
			return nil, 0, false
		}
		now := time.Now()
		if !e.busy(now) || (wait && !now.Before(deadline)) {
			e.writing = true
			off := e.offset
			t.mu.Unlock()
			return e, off, true
		}
		if !wait {
			t.mu.Unlock()
			return nil, 0, false
		}
		if t.settled == nil {
			t.settled = make(chan struct{})
		}
		ch := t.settled
		t.mu.Unlock()
		timer := time.NewTimer(max(min(time.Until(deadline), t.grace), time.Millisecond))
		select {
		case <-ch:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, 0, false
		}
		timer.Stop()
	}
}

// endWrite releases an update's claim of q's entry e: written, the broker holds off;
// otherwise, with unsure, it may still land.
func (t *table) endWrite(q message.Queue, e *entry, off int64, written, unsure bool) {
	t.mu.Lock()
	e.writing = false
	switch {
	case written:
		e.persisted = off
	case unsure:
		e.unsure = time.Now().Add(t.grace)
	}
	t.settledLocked()
	t.unlockCommit(q, e, written, false)
}
