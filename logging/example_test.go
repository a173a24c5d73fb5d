package logging_test

import (
	"log/slog"
	"os"

	"github.com/sirupsen/logrus"

	"github.com/rmqpush/rmqpush/logging"
)

// A log/slog logger, as consumer.WithLogger(logging.Slog(logger)) uses it: rmqpush's
// key-value pairs arrive as slog attributes, at the slog level of the same name.
func ExampleSlog() {
	h := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelInfo,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // a stable output for the example
			}
			return a
		},
	})
	lg := logging.Slog(slog.New(h))
	if logging.Enabled(lg, logging.LevelWarn) {
		lg.Log(logging.LevelWarn, "pull failed; retrying later", "queue", "orders@broker-a:3", "offset", 1200)
	}
	if logging.Enabled(lg, logging.LevelDebug) {
		lg.Log(logging.LevelDebug, "not written: the handler is at Info")
	}
	// Output:
	// level=WARN msg="pull failed; retrying later" queue=orders@broker-a:3 offset=1200
}

// A logrus logger, as consumer.WithLogger(logging.Logrus(logger)) uses it: key-value
// pairs become logrus fields.
func ExampleLogrus() {
	l := logrus.New()
	l.SetOutput(os.Stdout)
	l.SetFormatter(&logrus.TextFormatter{DisableTimestamp: true, DisableColors: true})
	l.SetLevel(logrus.InfoLevel)
	lg := logging.Logrus(l)
	lg.Log(logging.LevelInfo, "consumer started", "group", "orders-service", "queues", 8)
	// Output:
	// level=info msg="consumer started" group=orders-service queues=8
}
