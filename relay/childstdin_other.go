//go:build !unix

package relay

// writeNow takes nothing where a pipe cannot be written without the risk
// of waiting: every frame path write then goes the SDK's way, on a
// goroutine of its own that may wait (tryWrite).
func (w *childStdin) writeNow([]byte) int { return 0 }
