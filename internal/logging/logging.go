// Package logging gives the layers below the consumer the public logging package's
// types under their old import path, so the logger every layer speaks is the one users
// pass in (package github.com/rmqpush/rmqpush/logging) and nothing converts between them.
package logging

import "github.com/rmqpush/rmqpush/logging"

// Level is logging.Level.
type Level = logging.Level

// Logger is logging.Logger.
type Logger = logging.Logger

// Log levels: those of package logging.
const (
	LevelNone  = logging.LevelNone
	LevelError = logging.LevelError
	LevelWarn  = logging.LevelWarn
	LevelInfo  = logging.LevelInfo
	LevelDebug = logging.LevelDebug
)

// Enabled is logging.Enabled.
func Enabled(l Logger, level Level) bool { return logging.Enabled(l, level) }

// Nop is logging.Nop.
func Nop() Logger { return logging.Nop() }
