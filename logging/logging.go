// Package logging is the logger interface rmqpush logs through, a no-op default, and
// adapters from the loggers Go services already run: log/slog (Slog) and logrus
// (Logrus).
//
//	c, err := consumer.NewPushConsumer("orders-service",
//		consumer.WithNameServers("127.0.0.1:9876"),
//		consumer.WithLogger(logging.Slog(slog.Default())))
//
// Callers check Enabled before building key-value pairs, so a disabled level costs one
// interface call. Nothing here is global: each consumer carries its own Logger, and a
// nil Logger means no logging.
package logging

// Level is a log level. Higher values are more verbose; LevelNone turns logging off.
type Level int8

// Log levels, from silent to most verbose.
const (
	LevelNone Level = iota
	LevelError
	LevelWarn
	LevelInfo
	LevelDebug
)

// String returns the level's lower-case name.
func (l Level) String() string {
	switch l {
	case LevelNone:
		return "none"
	case LevelError:
		return "error"
	case LevelWarn:
		return "warn"
	case LevelInfo:
		return "info"
	case LevelDebug:
		return "debug"
	default:
		return "unknown"
	}
}

// Logger receives rmqpush's log lines. Level reports the most verbose level the logger
// wants; Log is only called for levels at or below it. keyvals alternate keys (strings)
// and values. Implementations must be safe for concurrent use and should not block.
type Logger interface {
	// Level returns the most verbose level wanted.
	Level() Level
	// Log writes one line: msg and the key-value pairs.
	Log(level Level, msg string, keyvals ...any)
}

// Enabled reports whether l wants lines of the given level. A nil Logger wants none.
func Enabled(l Logger, level Level) bool {
	return l != nil && level != LevelNone && level <= l.Level()
}

// Nop returns a Logger that discards everything.
func Nop() Logger { return nopLogger{} }

type nopLogger struct{}

func (nopLogger) Level() Level              { return LevelNone }
func (nopLogger) Log(Level, string, ...any) {}
