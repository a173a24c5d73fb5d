package offset

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rmqpush/rmqpush/message"
)

// BrokerAPI is what RemoteStore needs from the broker client.
type BrokerAPI interface {
	// QueryConsumerOffset asks the broker holding q for the group's offset. found is false,
	// with a nil error, when the broker answers QUERY_NOT_FOUND (a new group); any other
	// failure is an error.
	QueryConsumerOffset(ctx context.Context, group string, q message.Queue) (offset int64, found bool, err error)
	// UpdateConsumerOffset writes the group's offset of q to the broker holding q.
	UpdateConsumerOffset(ctx context.Context, group string, q message.Queue, offset int64) error
}

// RemoteStore keeps a clustering group's offsets on the brokers.
type RemoteStore struct {
	group string
	api   BrokerAPI
	table table
}

// NewRemoteStore returns a store for group's offsets, kept on the brokers through api.
func NewRemoteStore(group string, api BrokerAPI) *RemoteStore {
	return &RemoteStore{group: group, api: api, table: newTable()}
}

var _ Store = (*RemoteStore)(nil)

// SetCommitHook makes the store call fn whenever an offset in memory moves away from
// the one its broker holds (Update, UpdateAndFreeze), and whenever a write of an offset
// ends and leaves it still ahead (Flush skipped the queue while that write was in
// flight); see commit.go. fn runs on the caller's goroutine, with no lock of the
// store's held, and must not block: it should arrange a Flush soon.
func (s *RemoteStore) SetCommitHook(fn func()) {
	s.table.mu.Lock()
	s.table.commit = fn
	s.table.mu.Unlock()
}

// Load does nothing: a remote store reads each offset from its broker when asked.
func (s *RemoteStore) Load() error { return nil }

// Update sets the in-memory offset of q; see Store.
func (s *RemoteStore) Update(q message.Queue, offset int64, increaseOnly bool) {
	s.table.update(q, offset, increaseOnly)
}

// UpdateAndFreeze sets and freezes the in-memory offset of q; see Store.
func (s *RemoteStore) UpdateAndFreeze(q message.Queue, offset int64) {
	s.table.updateAndFreeze(q, offset)
}

// Read returns the offset of q; see Store. Reading from the store asks the broker.
func (s *RemoteStore) Read(ctx context.Context, q message.Queue, how ReadType) (int64, error) {
	if off, store, err := s.table.readMemory(q, how); !store {
		return off, err
	}
	off, found, err := s.api.QueryConsumerOffset(ctx, s.group, q)
	if err != nil {
		return 0, fmt.Errorf("offset: query %s offset of group %s: %w", q, s.group, err)
	}
	if !found {
		return NoOffset, nil
	}
	s.table.set(q, off)
	return off, nil
}

// Persist writes the in-memory offset of q to its broker, whether or not it changed.
// When a write of q's offset is in flight (a pull carrying it), it waits for it to end
// first (within ctx, and at most about a second), so the broker cannot store the older
// offset after this one.
func (s *RemoteStore) Persist(ctx context.Context, q message.Queue) error {
	e, off, ok := s.table.claimWrite(ctx, q, true)
	if !ok {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("offset: persist %s offset of group %s: waiting for the write in flight: %w", q, s.group, err)
		}
		return nil // no offset in memory
	}
	return s.write(ctx, q, e, off)
}

// PersistAll writes the changed offsets of qs, one goroutine per broker, and forgets the
// queues not in qs; see Store. A queue whose offset is being written (by its pull) is
// left to that write.
func (s *RemoteStore) PersistAll(ctx context.Context, qs []message.Queue) error {
	return s.writeAll(ctx, s.table.dirty(qs, true))
}

// Flush writes the offsets that changed since their last successful persist; see
// Store. A queue whose offset is being written (by its pull) is left to that write.
func (s *RemoteStore) Flush(ctx context.Context) error {
	dirty := s.table.changed()
	if len(dirty) == 0 {
		return nil
	}
	return s.writeAll(ctx, dirty)
}

// BeginPullCommit claims q's offset for a pull; see Store and commit.go.
func (s *RemoteStore) BeginPullCommit(q message.Queue) (PullCommit, bool) {
	return s.table.beginPull(q)
}

// EndPullCommit releases a pull's claim; see Store.
func (s *RemoteStore) EndPullCommit(c PullCommit, outcome CommitOutcome) { s.table.endPull(c, outcome) }

// writeAll writes offsets, one goroutine per broker, skipping the queues with a write
// in flight.
func (s *RemoteStore) writeAll(ctx context.Context, dirty map[message.Queue]int64) error {
	byBroker := make(map[string][]message.Queue)
	for q := range dirty {
		byBroker[q.BrokerName] = append(byBroker[q.BrokerName], q)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, queues := range byBroker {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, q := range queues {
				e, off, ok := s.table.claimWrite(ctx, q, false)
				if !ok {
					continue // being written, or removed meanwhile
				}
				if err := s.write(ctx, q, e, off); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// write sends an update claimed by claimWrite and releases the claim. A failed update
// may still reach the broker (a timeout, a lost connection): the queue stays busy for a
// while after.
func (s *RemoteStore) write(ctx context.Context, q message.Queue, e *entry, off int64) error {
	err := s.api.UpdateConsumerOffset(ctx, s.group, q, off)
	s.table.endWrite(q, e, off, err == nil, err != nil && !notSent(err))
	if err != nil {
		return fmt.Errorf("offset: persist %s offset %d of group %s: %w", q, off, s.group, err)
	}
	return nil
}

// notSent reports whether err says a write never reached the broker: its connection
// could not be made (the transport's errors say so with a Dialing method).
func notSent(err error) bool {
	var d interface{ Dialing() bool }
	return errors.As(err, &d) && d.Dialing()
}

// Remove forgets the in-memory offset of q and ends its lease.
func (s *RemoteStore) Remove(q message.Queue) { s.table.remove(q) }

// Begin forgets the in-memory offset of q (its new owner reads it from the broker) and
// starts a new lease of q; see Store.
func (s *RemoteStore) Begin(q message.Queue) Lease {
	s.table.remove(q)
	return s.table.begin(q)
}

// UpdateFor sets the in-memory offset of l's queue if l is its current lease; see Store.
func (s *RemoteStore) UpdateFor(l Lease, offset int64, increaseOnly bool) {
	s.table.updateFor(l, offset, increaseOnly)
}

// Table returns a copy of the in-memory offsets.
func (s *RemoteStore) Table() map[message.Queue]int64 { return s.table.snapshot() }
