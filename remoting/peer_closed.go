package remoting

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"syscall"
)

// ErrMayRequireTLS is wrapped by the error of a plain connection to a server that closed
// it before sending a single frame, which is what a RocketMQ server enforcing TLS does
// to a client that does not speak it.
var ErrMayRequireTLS = errors.New("the server may require TLS (WithTLS)")

// peerClosed describes a read that found the connection closed by the peer (err is
// io.EOF or a connection reset). A client's plain connection closed before any frame
// came back names the likely cause: the server requires TLS.
func (c *conn) peerClosed(err error, framesRead uint64) error {
	if _, client := c.owner.(*Client); client && framesRead == 0 {
		if _, isTLS := c.nc.(*tls.Conn); !isTLS {
			return fmt.Errorf("closed by peer before any answer: %w: %w", ErrMayRequireTLS, err)
		}
	}
	return fmt.Errorf("closed by peer: %w", err)
}

// isPeerClose reports whether a read error means the peer closed the connection.
func isPeerClose(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}
