//go:build unix

package remoting

import (
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	server = <-accepted
	require.NotNil(t, server)
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// tryWrite writes what the socket takes, allocating nothing; a full socket is a short
// write, not an error; a connection the peer closed is an error.
func TestRawWriterTryWrite(t *testing.T) {
	client, server := tcpPair(t)
	w := newRawWriter(client)
	require.NotNil(t, w)

	n, err := w.tryWrite([]byte("hello"))
	require.NoError(t, err)
	require.Equal(t, 5, n)
	got := make([]byte, 5)
	_, err = io.ReadFull(server, got)
	require.NoError(t, err)
	require.Equal(t, "hello", string(got))

	small := []byte("x")
	allocs := testing.AllocsPerRun(100, func() {
		if n, err := w.tryWrite(small); n != 1 || err != nil {
			t.Fatalf("wrote %d: %v", n, err)
		}
	})
	require.Zero(t, allocs, "a write allocates nothing")
	_, err = io.ReadFull(server, make([]byte, 101)) // AllocsPerRun runs it once more
	require.NoError(t, err)

	big := make([]byte, 64<<20) // more than the socket buffers hold: the peer reads nothing
	n, err = w.tryWrite(big)
	require.NoError(t, err, "a full socket is no error")
	require.Positive(t, n)
	require.Less(t, n, len(big))

	require.NoError(t, server.Close())
	for range 100 { // the first writes after the close may still be taken
		if _, err = w.tryWrite(small); err != nil {
			break
		}
	}
	require.Error(t, err, "the peer is gone")
}
