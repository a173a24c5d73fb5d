//go:build unix

package remoting

import (
	"net"
	"syscall"
)

// rawWriter writes to a TCP socket without ever waiting for it: what the kernel does not
// take at once is left to the caller (the conn's write loop, which may wait). One write
// runs at a time (the conn's writing flag); its state lives here, not in a closure over
// locals, which RawConn.Write would make escape: a write allocates nothing.
type rawWriter struct {
	rc    syscall.RawConn
	write func(fd uintptr) bool // w.writeFd, bound once
	buf   []byte                // the write in progress: what to write,
	n     int                   // how much is written,
	err   error                 // and the error that ended it
}

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
	w := &rawWriter{rc: rc}
	w.write = w.writeFd
	return w
}

// tryWrite writes as much of b as the socket takes now and returns how much that was.
// A full socket buffer is not an error; a broken connection is.
func (w *rawWriter) tryWrite(b []byte) (int, error) {
	w.buf, w.n, w.err = b, 0, nil
	err := w.rc.Write(w.write)
	n, werr := w.n, w.err
	w.buf, w.err = nil, nil // b is the caller's again
	if werr != nil {
		return n, werr
	}
	return n, err
}

// writeFd is tryWrite's RawConn.Write callback: it writes w.buf[w.n:] until the socket
// is full, and never asks to wait for it.
func (w *rawWriter) writeFd(fd uintptr) bool {
	for w.n < len(w.buf) {
		m, e := syscall.Write(int(fd), w.buf[w.n:])
		if m > 0 {
			w.n += m
		}
		switch {
		case e == syscall.EINTR:
			continue
		case e == syscall.EAGAIN:
			return true // full: the rest goes to the write loop
		case e != nil:
			w.err = e
			return true
		case m <= 0:
			return true
		}
	}
	return true // never wait for the socket
}
