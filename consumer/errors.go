package consumer

import "errors"

// Errors a caller may act on.
var (
	// ErrClosed is returned by calls after Shutdown.
	ErrClosed = errors.New("consumer: shut down")
	// ErrStarted is returned by calls that must come before Start.
	ErrStarted = errors.New("consumer: already started")
	// ErrNotStarted is returned by calls that need a started consumer.
	ErrNotStarted = errors.New("consumer: not started")
	// ErrNotSupported is returned for features rmqpush does not implement yet.
	ErrNotSupported = errors.New("consumer: not supported")
)
