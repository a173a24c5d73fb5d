package offset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
)

// LocalStore keeps a broadcasting group's offsets in a file, as Java's
// LocalFileOffsetStore does: <dir>/<clientID>/<group>/offsets.json, in the fastjson
// form a Java client reads, with the previous version kept as offsets.json.bak.
//
// Writes are atomic: the new content goes to a temporary file that is synced, the
// current file becomes the .bak, and the temporary file is renamed into place. Reading
// falls back to the .bak when the file is missing, empty or corrupt.
type LocalStore struct {
	path  string
	table table

	fileMu sync.Mutex // serializes file writes
}

// DefaultLocalDir returns Java's default directory for local offsets,
// ~/.rocketmq_offsets.
func DefaultLocalDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("offset: no home directory for the default offset store: %w", err)
	}
	return filepath.Join(home, ".rocketmq_offsets"), nil
}

// NewLocalStore returns a store for group's offsets under dir. clientID should be stable
// across restarts (Java's ip@instanceName, without a PID), or offsets are not found again.
func NewLocalStore(dir, clientID, group string) (*LocalStore, error) {
	for name, v := range map[string]string{"directory": dir, "client id": clientID, "group": group} {
		if v == "" {
			return nil, fmt.Errorf("offset: local store needs a %s", name)
		}
	}
	return &LocalStore{path: filepath.Join(dir, clientID, group, "offsets.json"), table: newTable()}, nil
}

var _ Store = (*LocalStore)(nil)

// Path returns the offsets file's path.
func (s *LocalStore) Path() string { return s.path }

// Load reads the offsets file (or its .bak) into memory. A missing file is no error: the
// group starts fresh. A file and .bak that are both corrupt is an error naming them.
func (s *LocalStore) Load() error {
	offsets, err := s.readFile()
	if err != nil {
		return err
	}
	for q, off := range offsets {
		s.table.set(q, off)
	}
	return nil
}

// readFile returns the offsets in the file, falling back to the .bak.
func (s *LocalStore) readFile() (map[message.Queue]int64, error) {
	offsets, mainErr := readOffsetsFile(s.path)
	if mainErr == nil {
		return offsets, nil
	}
	offsets, bakErr := readOffsetsFile(s.path + ".bak")
	if bakErr == nil {
		return offsets, nil
	}
	if errors.Is(mainErr, fs.ErrNotExist) && errors.Is(bakErr, fs.ErrNotExist) {
		return nil, nil
	}
	return nil, fmt.Errorf("offset: cannot read local offsets: %w; and the backup: %w", mainErr, bakErr)
}

func readOffsetsFile(path string) (map[message.Queue]int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("offsets file %s is empty: %w", path, fs.ErrNotExist)
	}
	var body protocol.OffsetTableBody
	if err := body.Decode(data); err != nil {
		return nil, fmt.Errorf("offsets file %s is corrupt: %w", path, err)
	}
	return body.OffsetTable, nil
}

// Update sets the in-memory offset of q; see Store.
func (s *LocalStore) Update(q message.Queue, offset int64, increaseOnly bool) {
	s.table.update(q, offset, increaseOnly)
}

// UpdateAndFreeze sets and freezes the in-memory offset of q; see Store.
func (s *LocalStore) UpdateAndFreeze(q message.Queue, offset int64) {
	s.table.updateAndFreeze(q, offset)
}

// Read returns the offset of q; see Store. Reading from the store reads the file.
func (s *LocalStore) Read(_ context.Context, q message.Queue, how ReadType) (int64, error) {
	if off, store, err := s.table.readMemory(q, how); !store {
		return off, err
	}
	offsets, err := s.readFile()
	if err != nil {
		return 0, err
	}
	off, ok := offsets[q]
	if !ok {
		return NoOffset, nil
	}
	s.table.set(q, off)
	return off, nil
}

// Persist writes every in-memory offset to the file.
func (s *LocalStore) Persist(context.Context, message.Queue) error {
	return s.writeFile(s.table.snapshot())
}

// PersistAll writes the file when an offset of qs changed since the last successful
// write. Unlike the remote store it keeps the offsets of queues not in qs: a queue whose
// broker left the route for a while must resume where it stopped, not at the queue's
// end, when it comes back (Java's LocalFileOffsetStore drops them).
func (s *LocalStore) PersistAll(_ context.Context, qs []message.Queue) error {
	if len(s.table.dirty(qs, false)) == 0 {
		return nil
	}
	return s.writeFile(s.table.snapshot())
}

// BeginPullCommit says no: a broadcasting consumer's offsets stay in the file.
func (s *LocalStore) BeginPullCommit(message.Queue) (PullCommit, bool) { return PullCommit{}, false }

// EndPullCommit does nothing; see BeginPullCommit.
func (s *LocalStore) EndPullCommit(PullCommit, CommitOutcome) {}

// Flush writes the file when any offset changed since the last successful write.
func (s *LocalStore) Flush(context.Context) error {
	if len(s.table.changed()) == 0 {
		return nil
	}
	return s.writeFile(s.table.snapshot())
}

func (s *LocalStore) writeFile(offsets map[message.Queue]int64) error {
	s.fileMu.Lock()
	defer s.fileMu.Unlock()
	body := protocol.OffsetTableBody{OffsetTable: offsets}
	if err := writeAtomically(s.path, body.Encode(protocol.StyleFastjson)); err != nil {
		return fmt.Errorf("offset: write local offsets: %w", err)
	}
	for q, off := range offsets {
		s.table.markPersisted(q, off)
	}
	return nil
}

// writeAtomically replaces path with data, keeping the previous content as path.bak.
func writeAtomically(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "offsets-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", tmp.Name(), err)
	}
	if err := os.Rename(path, path+".bak"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // make the renames durable where the platform allows it
		d.Close()
	}
	return nil
}

// Remove ends a freeze of q's offset, and its lease, and keeps the offset: every write of the file
// writes the whole table, so a queue forgotten here would vanish from the file at the
// next write, and start over from ConsumeFromWhere after a restart.
func (s *LocalStore) Remove(q message.Queue) { s.table.unfreeze(q) }

// Begin ends a freeze of q's offset, keeping the offset (see Remove), and starts a new
// lease of q; see Store.
func (s *LocalStore) Begin(q message.Queue) Lease {
	s.table.unfreeze(q)
	return s.table.begin(q)
}

// UpdateFor sets the in-memory offset of l's queue if l is its current lease; see Store.
func (s *LocalStore) UpdateFor(l Lease, offset int64, increaseOnly bool) {
	s.table.updateFor(l, offset, increaseOnly)
}

// Table returns a copy of the in-memory offsets.
func (s *LocalStore) Table() map[message.Queue]int64 { return s.table.snapshot() }
