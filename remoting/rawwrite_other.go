//go:build !unix

package remoting

import "net"

// rawWriter is not available off Unix: every frame goes through the write loop.
type rawWriter struct{}

func newRawWriter(net.Conn) *rawWriter { return nil }

func (*rawWriter) tryWrite([]byte) (int, error) { return 0, nil }
