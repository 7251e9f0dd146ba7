package logship

import (
	"fmt"

	"github.com/open-policy-agent/opa/v1/logging"
	"go.uber.org/zap"
)

// opaLogger writes the plugin's log lines to mcpx-fw's service log. The
// plugin logs upload outcomes and its buffer's drops, never an event's
// content (its console logging is off).
type opaLogger struct {
	log   *zap.Logger
	level logging.Level
}

func newOPALogger(log *zap.Logger) *opaLogger {
	return &opaLogger{log: log.Named("decision-log-service"), level: logging.Info}
}

func (l *opaLogger) Debug(f string, a ...any) { l.at(logging.Debug, f, a) }
func (l *opaLogger) Info(f string, a ...any)  { l.at(logging.Info, f, a) }
func (l *opaLogger) Warn(f string, a ...any)  { l.at(logging.Warn, f, a) }
func (l *opaLogger) Error(f string, a ...any) { l.at(logging.Error, f, a) }

// at logs at zap's level for lvl.
func (l *opaLogger) at(lvl logging.Level, f string, a []any) {
	if lvl > l.level {
		return
	}
	msg := fmt.Sprintf(f, a...)
	switch lvl {
	case logging.Error:
		l.log.Error(msg)
	case logging.Warn:
		l.log.Warn(msg)
	case logging.Info:
		l.log.Info(msg)
	default:
		l.log.Debug(msg)
	}
}

// WithFields keeps the fields as zap fields.
func (l *opaLogger) WithFields(fields map[string]any) logging.Logger {
	zf := make([]zap.Field, 0, len(fields))
	for k, v := range fields {
		zf = append(zf, zap.Any(k, v))
	}
	return &opaLogger{log: l.log.With(zf...), level: l.level}
}

func (l *opaLogger) GetLevel() logging.Level      { return l.level }
func (l *opaLogger) SetLevel(level logging.Level) { l.level = level }
