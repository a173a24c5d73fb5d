package procstat

import (
	"net"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFiguresOfThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("figures are read from /proc")
	}
	pid := os.Getpid()
	require.Greater(t, RSS(pid), int64(1<<20))
	before := Sockets(pid)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	require.Equal(t, before+1, Sockets(pid))
	require.Positive(t, CPUTime())
	require.Zero(t, RSS(-1))
	require.Zero(t, Sockets(-1))
}
