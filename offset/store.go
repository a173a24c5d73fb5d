package offset

import (
	"context"

	"github.com/rmqpush/rmqpush/message"
)

// ReadType says where Read looks for an offset.
type ReadType int

const (
	// ReadFromMemory returns the in-memory offset, or -1 when there is none.
	ReadFromMemory ReadType = iota
	// ReadFromStore asks the backing store (broker or file) and caches the answer.
	ReadFromStore
	// MemoryFirstThenStore returns the in-memory offset when there is one, else asks the
	// backing store.
	MemoryFirstThenStore
)

// String returns the read type's name.
func (t ReadType) String() string {
	switch t {
	case ReadFromMemory:
		return "memory"
	case ReadFromStore:
		return "store"
	case MemoryFirstThenStore:
		return "memory-then-store"
	default:
		return "unknown"
	}
}

// NoOffset is what Read returns, with a nil error, when the group has no offset for the
// queue: a new group. The caller then starts where its consume-from-where says.
const NoOffset int64 = -1

// Lease is one assignment of a queue to this client, begun by Store.Begin and ended by
// Store.Remove or the next Begin. A write made through an ended lease (UpdateFor) is
// ignored: it is the late result of an earlier assignment — a listener call or a pull
// answer that outlived its queue's removal, or an offset reset that made the queue
// anew — and applying it would move the offset of a queue this client no longer owns,
// or past the reset. The zero Lease writes nothing.
type Lease struct{ l *lease }

// Store holds a group's consume offsets. All methods are safe for concurrent use.
type Store interface {
	// Load reads what the backing store holds at start (a file), if anything.
	Load() error
	// Update sets the in-memory offset of q. With increaseOnly, a smaller offset than the
	// one held is ignored. An offset frozen by UpdateAndFreeze is not changed.
	Update(q message.Queue, offset int64, increaseOnly bool)
	// Begin starts a new assignment of q to this client, as Remove ends one, and
	// returns the lease its writers update q's offset through (UpdateFor).
	Begin(q message.Queue) Lease
	// UpdateFor is Update for a writer that may be late (a listener result, a pull
	// answer): it does nothing unless l is still q's current lease.
	UpdateFor(l Lease, offset int64, increaseOnly bool)
	// UpdateAndFreeze sets the in-memory offset of q and freezes it: later Updates are
	// ignored until Remove. Used when the broker corrects an illegal offset or an admin
	// resets offsets, so that consume results still in flight cannot overwrite it.
	UpdateAndFreeze(q message.Queue, offset int64)
	// Read returns the offset of q. It returns NoOffset and a nil error when none is
	// stored, and an error when the answer is unknown (the broker could not be asked):
	// the caller must then not start consuming q.
	Read(ctx context.Context, q message.Queue, how ReadType) (int64, error)
	// Persist writes the in-memory offset of q to the backing store.
	Persist(ctx context.Context, q message.Queue) error
	// PersistAll writes the offsets of qs that changed since their last successful
	// persist. The remote store also forgets the in-memory offsets of queues not in qs
	// (no longer assigned; their new owner has them); the local store keeps them. It
	// returns the joined errors of the writes that failed.
	PersistAll(ctx context.Context, qs []message.Queue) error
	// Flush writes every in-memory offset that changed since its last successful
	// persist, assigned or not. The consumer calls it often, so offsets reach the broker
	// soon after each listener call instead of at the next pull or persist round; it
	// costs nothing when nothing changed.
	Flush(ctx context.Context) error
	// BeginPullCommit claims q's offset for a pull to carry (its commit-offset flag):
	// ok when q has an offset above 0 and no other write of it is in flight. The pull's
	// owner must call EndPullCommit once the pull's fate is known. Only the remote store
	// says yes; see commit.go for why a queue has at most one write in flight.
	BeginPullCommit(q message.Queue) (PullCommit, bool)
	// EndPullCommit releases a claim of BeginPullCommit: outcome says whether the
	// broker stored the offset.
	EndPullCommit(c PullCommit, outcome CommitOutcome)
	// Remove ends a freeze of q's offset, and q's lease. The remote store also forgets the in-memory
	// offset (the queue's next owner reads it from the broker); the local store keeps
	// it, as its file holds every queue's offset (Java's LocalFileOffsetStore.removeOffset
	// does nothing).
	Remove(q message.Queue)
	// Table returns a copy of the in-memory offsets.
	Table() map[message.Queue]int64
}
