package record

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Tail reads a record file that another process is still appending to: each Next
// returns the lines completed since the previous call. It is not safe for concurrent
// use.
type Tail struct {
	path string
	pos  int64 // bytes consumed
}

// NewTail returns a Tail of path; the file may not exist yet.
func NewTail(path string) *Tail { return &Tail{path: path} }

// Path returns the file's path.
func (t *Tail) Path() string { return t.path }

// Next returns the records completed since the last call.
func (t *Tail) Next() ([]Record, error) {
	f, err := os.Open(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(t.pos, io.SeekStart); err != nil {
		return nil, fmt.Errorf("record: %s: %w", t.path, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("record: %s: %w", t.path, err)
	}
	recs, used, err := ParseAll(data)
	t.pos += int64(used)
	if err != nil {
		return recs, fmt.Errorf("%s at byte %d: %w", t.path, t.pos, err)
	}
	return recs, nil
}
