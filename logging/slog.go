package logging

import (
	"context"
	"log/slog"
)

// Slog adapts a log/slog logger. Levels map both ways (SlogLevel, LevelOf): Level
// reports the most verbose of rmqpush's levels the slog handler is enabled for, asked
// on every call, so a slog.LevelVar changed at run time takes effect at once; Log
// writes a record at the matching slog level with the key-value pairs as slog
// attributes (an slog.Attr among them is kept as it is). A nil logger gives Nop.
func Slog(l *slog.Logger) Logger {
	if l == nil {
		return Nop()
	}
	return slogLogger{l: l}
}

type slogLogger struct{ l *slog.Logger }

func (a slogLogger) Level() Level {
	ctx := context.Background()
	for _, lv := range [...]Level{LevelDebug, LevelInfo, LevelWarn, LevelError} {
		if a.l.Enabled(ctx, SlogLevel(lv)) {
			return lv
		}
	}
	return LevelNone
}

func (a slogLogger) Log(level Level, msg string, keyvals ...any) {
	if level == LevelNone {
		return
	}
	a.l.Log(context.Background(), SlogLevel(level), msg, keyvals...)
}

// SlogLevel returns the slog level of an rmqpush level: Error, Warn, Info and Debug
// map to slog's levels of the same names; LevelNone maps above slog.LevelError.
func SlogLevel(l Level) slog.Level {
	switch l {
	case LevelError:
		return slog.LevelError
	case LevelWarn:
		return slog.LevelWarn
	case LevelInfo:
		return slog.LevelInfo
	case LevelDebug:
		return slog.LevelDebug
	default:
		return slog.LevelError + 4
	}
}

// LevelOf returns the rmqpush level of a slog level: the most verbose rmqpush level at
// or above it (slog's in-between levels, such as slog.LevelInfo+2, round up to the
// next named level; anything below slog.LevelInfo is LevelDebug).
func LevelOf(l slog.Level) Level {
	switch {
	case l > slog.LevelWarn:
		return LevelError
	case l > slog.LevelInfo:
		return LevelWarn
	case l > slog.LevelDebug:
		return LevelInfo
	default:
		return LevelDebug
	}
}
