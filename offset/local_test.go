package offset

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/message"
)

func TestLocalStoreRoundTripAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := NewLocalStore(dir, "192.0.2.2@DEFAULT", "g")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "192.0.2.2@DEFAULT", "g", "offsets.json"), s.Path())
	require.NoError(t, s.Load(), "no file yet: a fresh group")
	off, err := s.Read(ctx, qa0, ReadFromStore)
	require.NoError(t, err)
	require.Equal(t, NoOffset, off)

	all := []message.Queue{qa0, qa1}
	s.Update(qa0, 10, true)
	s.Update(qa1, 20, true)
	require.NoError(t, s.PersistAll(ctx, all))
	data, err := os.ReadFile(s.Path())
	require.NoError(t, err)
	require.Equal(t, `{"offsetTable":{{"brokerName":"a","queueId":0,"topic":"t"}:10,{"brokerName":"a","queueId":1,"topic":"t"}:20}}`, string(data),
		"the fastjson form a Java client reads")

	s.Update(qa0, 11, true)
	require.NoError(t, s.PersistAll(ctx, all))
	bak, err := os.ReadFile(s.Path() + ".bak")
	require.NoError(t, err)
	require.Equal(t, string(data), string(bak), "the previous version is kept")

	restarted, err := NewLocalStore(dir, "192.0.2.2@DEFAULT", "g")
	require.NoError(t, err)
	require.NoError(t, restarted.Load())
	require.Equal(t, map[message.Queue]int64{qa0: 11, qa1: 20}, restarted.Table())
	off, err = restarted.Read(ctx, qa1, ReadFromStore)
	require.NoError(t, err)
	require.Equal(t, int64(20), off)
}

func TestLocalStoreSkipsUnchangedWrites(t *testing.T) {
	ctx := context.Background()
	s, err := NewLocalStore(t.TempDir(), "c", "g")
	require.NoError(t, err)
	s.Update(qa0, 1, true)
	require.NoError(t, s.PersistAll(ctx, []message.Queue{qa0}))
	info1, err := os.Stat(s.Path())
	require.NoError(t, err)
	require.NoError(t, os.Remove(s.Path()))
	require.NoError(t, s.PersistAll(ctx, []message.Queue{qa0}))
	_, err = os.Stat(s.Path())
	require.True(t, os.IsNotExist(err), "nothing changed: no write (the file removed above stays removed)")
	require.NoError(t, s.Persist(ctx, qa0), "Persist always writes")
	info2, err := os.Stat(s.Path())
	require.NoError(t, err)
	require.Equal(t, info1.Size(), info2.Size())
}

func TestLocalStoreFallsBackToBackup(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := NewLocalStore(dir, "c", "g")
	require.NoError(t, err)
	s.Update(qa0, 5, true)
	require.NoError(t, s.Persist(ctx, qa0))
	s.Update(qa0, 6, true)
	require.NoError(t, s.Persist(ctx, qa0))

	require.NoError(t, os.WriteFile(s.Path(), []byte(`{"offsetTable":{{"brokerName"`), 0o644))
	r, _ := NewLocalStore(dir, "c", "g")
	require.NoError(t, r.Load())
	require.Equal(t, int64(5), r.Table()[qa0], "a corrupt file falls back to the .bak")

	require.NoError(t, os.WriteFile(s.Path()+".bak", []byte("garbage"), 0o644))
	r, _ = NewLocalStore(dir, "c", "g")
	err = r.Load()
	require.ErrorContains(t, err, s.Path())
	require.ErrorContains(t, err, "corrupt")
	_, err = r.Read(ctx, qa0, ReadFromStore)
	require.Error(t, err, "an unreadable store is unknown, not a new group")

	require.NoError(t, os.Remove(s.Path()))
	require.NoError(t, os.WriteFile(s.Path()+".bak", []byte(`{"offsetTable":{}}`), 0o644))
	r, _ = NewLocalStore(dir, "c", "g")
	require.NoError(t, r.Load(), "a missing file falls back to the .bak")
	require.Empty(t, r.Table())
}

func TestNewLocalStoreValidates(t *testing.T) {
	_, err := NewLocalStore("", "c", "g")
	require.ErrorContains(t, err, "directory")
	_, err = NewLocalStore("d", "", "g")
	require.ErrorContains(t, err, "client id")
	_, err = NewLocalStore("d", "c", "")
	require.ErrorContains(t, err, "group")
	dir, err := DefaultLocalDir()
	require.NoError(t, err)
	require.Equal(t, ".rocketmq_offsets", filepath.Base(dir))
}

func TestLocalStoreKeepsQueuesNotAssignedNow(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := NewLocalStore(dir, "c", "g")
	require.NoError(t, err)
	s.Update(qa0, 10, true)
	s.Update(qb0, 20, true)
	require.NoError(t, s.PersistAll(ctx, []message.Queue{qa0, qb0}))
	// Broker b leaves the route for a while: its queue is not assigned, but its offset
	// must survive, in memory and in the file, for when it comes back.
	s.Update(qa0, 11, true)
	require.NoError(t, s.PersistAll(ctx, []message.Queue{qa0}))
	require.Equal(t, map[message.Queue]int64{qa0: 11, qb0: 20}, s.Table())
	r, _ := NewLocalStore(dir, "c", "g")
	require.NoError(t, r.Load())
	require.Equal(t, map[message.Queue]int64{qa0: 11, qb0: 20}, r.Table())
}

// Found by review: releasing queues one by one (Persist then Remove each, as the
// rebalancer does at shutdown) left only the last queue in the file, since every write
// writes the whole table and Remove had forgotten the others.
func TestLocalStoreKeepsRemovedQueuesInTheFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := NewLocalStore(dir, "c", "g")
	require.NoError(t, err)
	want := map[message.Queue]int64{qa0: 10, qb0: 20, qa1: 30}
	for q, off := range want {
		s.Update(q, off, true)
	}
	for q := range want {
		require.NoError(t, s.Persist(ctx, q))
		s.Remove(q)
	}
	r, err := NewLocalStore(dir, "c", "g")
	require.NoError(t, err)
	require.NoError(t, r.Load())
	require.Equal(t, want, r.Table())
}

func TestLocalStoreRemoveEndsAFreeze(t *testing.T) {
	s, err := NewLocalStore(t.TempDir(), "c", "g")
	require.NoError(t, err)
	s.UpdateAndFreeze(qa0, 5)
	s.Update(qa0, 9, true)
	require.Equal(t, int64(5), s.Table()[qa0], "frozen")
	s.Remove(qa0)
	require.Equal(t, int64(5), s.Table()[qa0], "kept")
	s.Update(qa0, 9, true)
	require.Equal(t, int64(9), s.Table()[qa0])
}

func TestLocalStoreReadTypes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := NewLocalStore(dir, "c", "g")
	require.NoError(t, err)
	s.Update(qa0, 5, true)
	require.NoError(t, s.PersistAll(ctx, []message.Queue{qa0}))
	s.Update(qa0, 7, true) // in memory only

	off, err := s.Read(ctx, qa0, ReadFromMemory)
	require.NoError(t, err)
	require.Equal(t, int64(7), off)
	off, err = s.Read(ctx, qa0, MemoryFirstThenStore)
	require.NoError(t, err)
	require.Equal(t, int64(7), off)
	off, err = s.Read(ctx, qa0, ReadFromStore)
	require.NoError(t, err)
	require.Equal(t, int64(5), off, "the file's, not memory's")

	// A queue only the file knows: from memory there is none; memory first falls back
	// to the file.
	other, err := NewLocalStore(dir, "c", "g")
	require.NoError(t, err)
	off, err = other.Read(ctx, qa0, ReadFromMemory)
	require.NoError(t, err)
	require.Equal(t, NoOffset, off)
	off, err = other.Read(ctx, qa0, MemoryFirstThenStore)
	require.NoError(t, err)
	require.Equal(t, int64(5), off)

	_, err = s.Read(ctx, qa0, ReadType(9))
	require.ErrorContains(t, err, "unknown read type 9")
}
