package remoting

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// A server that requires TLS closes a plain connection after reading its first bytes,
// without answering: the error says TLS may be required.
func TestClosedBeforeAnyAnswerSuggestsTLS(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newRawPeer(t)
	defer p.close()
	c := newClient(t)
	defer c.Close()

	done := make(chan error, 1)
	go func() {
		_, err := c.Invoke(context.Background(), p.addr(), NewRequest(codeEcho, nil, nil))
		done <- err
	}()
	nc := p.accept(t)
	_, err := io.ReadFull(nc, make([]byte, 8)) // the request arrived
	require.NoError(t, err)
	require.NoError(t, nc.Close())
	err = <-done
	require.ErrorIs(t, err, ErrMayRequireTLS)
	require.ErrorContains(t, err, "closed by peer before any answer: the server may require TLS (WithTLS)")
}

// Once the server answered, a close is just a close.
func TestClosedAfterAnAnswerDoesNotSuggestTLS(t *testing.T) {
	defer goleak.VerifyNone(t)
	heldCh := make(chan held, 1)
	s := startServer(t, WithServerHandler(codeHold, holdHandler(heldCh)))
	defer s.Close()
	c := newClient(t)
	defer c.Close()

	_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeHold, nil, nil))
		done <- err
	}()
	select {
	case <-heldCh:
	case <-time.After(5 * time.Second):
		t.Fatal("the held request never arrived")
	}
	s.CloseAllConns()
	err = <-done
	require.ErrorContains(t, err, "closed by peer")
	require.NotErrorIs(t, err, ErrMayRequireTLS)
}
