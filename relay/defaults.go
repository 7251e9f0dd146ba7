package relay

import "time"

// orDefault is v when it is set (positive), else def: every limit and
// deadline of Config takes its default this way, so a zero Config is a
// safe one.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
