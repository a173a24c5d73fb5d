package logging

import (
	"fmt"

	"github.com/sirupsen/logrus"
)

// Logrus adapts a logrus logger. Its level is read from the logrus logger on every
// Level call, so changing the logrus level at run time takes effect at once. Key-value
// pairs become logrus fields. A nil logger gives Nop.
func Logrus(l *logrus.Logger) Logger {
	if l == nil {
		return Nop()
	}
	return logrusLogger{l: l}
}

type logrusLogger struct{ l *logrus.Logger }

func (a logrusLogger) Level() Level {
	switch lv := a.l.GetLevel(); {
	case lv >= logrus.DebugLevel:
		return LevelDebug
	case lv == logrus.InfoLevel:
		return LevelInfo
	case lv == logrus.WarnLevel:
		return LevelWarn
	default:
		return LevelError
	}
}

func (a logrusLogger) Log(level Level, msg string, keyvals ...any) {
	fields := make(logrus.Fields, (len(keyvals)+1)/2)
	for i := 0; i < len(keyvals); i += 2 {
		key := fmt.Sprint(keyvals[i])
		if i+1 < len(keyvals) {
			fields[key] = keyvals[i+1]
		} else {
			fields[key] = "(missing value)"
		}
	}
	entry := a.l.WithFields(fields)
	switch level {
	case LevelError:
		entry.Error(msg)
	case LevelWarn:
		entry.Warn(msg)
	case LevelInfo:
		entry.Info(msg)
	case LevelDebug:
		entry.Debug(msg)
	}
}
