package protocol

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An offset info entry of megabytes of spaces is refused without splitting it into as
// many strings (strings.Split made 16 bytes of string header per space: 64 MiB here).
func TestPopOffsetsEntryOfSpacesIsCheap(t *testing.T) {
	spaces := strings.Repeat(" ", 4<<20)
	for _, in := range [][2]string{{"0 0 1", "0 0" + spaces + "1"}, {"0 0" + spaces + "1", "0 0 1"}} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ParsePopOffsets(in[0], in[1])
		runtime.ReadMemStats(&after)
		require.ErrorContains(t, err, "want 3 fields")
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated to refuse the entry")
	}
}
