// Package integration holds rmqpush's end-to-end tests: real consumers against the
// in-process fake broker cluster of package fakebroker, over loopback TCP.
package integration
