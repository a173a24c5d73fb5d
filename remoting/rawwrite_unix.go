//go:build unix

package remoting

import (
	"net"
	"syscall"
)

// rawWriter writes to a TCP socket without ever waiting for it: what the kernel does not
// take at once is left to the caller (the conn's write loop, which may wait).
type rawWriter struct{ rc syscall.RawConn }

// newRawWriter returns a rawWriter for nc, or nil when nc is not a plain socket (TLS
// and other wrapped connections go through the write loop).
func newRawWriter(nc net.Conn) *rawWriter {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return &rawWriter{rc: rc}
}

// tryWrite writes as much of b as the socket takes now and returns how much that was.
// A full socket buffer is not an error; a broken connection is.
func (w *rawWriter) tryWrite(b []byte) (int, error) {
	n := 0
	var werr error
	err := w.rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			m, e := syscall.Write(int(fd), b[n:])
			if m > 0 {
				n += m
			}
			switch {
			case e == syscall.EINTR:
				continue
			case e == syscall.EAGAIN:
				return true // full: the rest goes to the write loop
			case e != nil:
				werr = e
				return true
			case m <= 0:
				return true
			}
		}
		return true // never wait for the socket
	})
	if werr != nil {
		return n, werr
	}
	return n, err
}
