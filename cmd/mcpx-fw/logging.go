package main

import (
	"fmt"
	"io"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
)

// newLogger builds the JSON service logger. It writes to stderr by default:
// stdout carries the MCP protocol when serving over stdio.
func newLogger(cfg *config.Config) (*zap.Logger, func(), error) {
	level, err := zapcore.ParseLevel(cfg.Log.Level)
	if err != nil {
		return nil, nil, fmt.Errorf("log.level: %w", err)
	}
	w, closeFn, err := openSink(cfg.Log.File)
	if err != nil {
		return nil, nil, fmt.Errorf("log.file: %w", err)
	}
	if w == nil { // "off"
		return zap.NewNop(), closeFn, nil
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(w), level)
	return zap.New(core), closeFn, nil
}

// openSink opens a log destination: stderr when empty or "stderr",
// nothing when "off", else a file opened for appending (0600).
func openSink(path string) (io.Writer, func(), error) {
	switch path {
	case "", "stderr":
		return os.Stderr, func() {}, nil
	case "off":
		return nil, func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { _ = f.Close() }, nil
}
