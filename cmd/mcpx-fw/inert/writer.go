package inert

import (
	"io"
	"unicode/utf8"
)

// Writer is the sink: everything written through it reaches the
// underlying writer with every character Shown refuses escaped, newline
// excepted, every byte that is not UTF-8 escaped, and every combining
// mark past MaxMarks in a row escaped, the run counted across writes (two
// fields that each end and start with marks pile them up on screen).
// Backslashes pass as they are (the fields written through it have
// escaped theirs). A character split across two writes is held until the
// next one; Flush writes what is held when nothing more will come.
type Writer struct {
	w       io.Writer
	pending []byte // the start of a character the last write cut
	run     marks  // the combining marks the last write ended with
}

// NewWriter returns a sink writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes it. It reports len(p) on success, whatever
// the escaping added.
func (w *Writer) Write(p []byte) (int, error) {
	buf := p
	if len(w.pending) > 0 {
		buf = append(w.pending, p...)
	}
	cut := completeUpTo(buf)
	w.pending = append([]byte(nil), buf[cut:]...)
	if cut == 0 {
		return len(p), nil
	}
	if _, err := w.w.Write(sinkForm.appendRun(nil, string(buf[:cut]), &w.run)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a character the last write left incomplete, escaped as the
// bytes it is.
func (w *Writer) Flush() error {
	if len(w.pending) == 0 {
		return nil
	}
	out := sinkForm.appendRun(nil, string(w.pending), &w.run)
	w.pending = nil
	_, err := w.w.Write(out)
	return err
}

// completeUpTo is the length of the part of b that holds no incomplete
// character at its end: b minus the start of a valid UTF-8 sequence that
// the next write may complete.
func completeUpTo(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}
