package logship

// dropCounters are the plugin's counters of events it lost, as its
// metrics name them (counter_ + OPA's names): dropped from a full buffer,
// over a rate limit (none is configured, counted all the same), or failing
// to encode. OPA's size buffer also counts a bytes-limit drop under a
// second name; the event buffer mcpx-fw uses counts each drop once.
var dropCounters = []string{
	"counter_decision_logs_dropped_buffer_size_limit_exceeded",
	"counter_decision_logs_dropped_rate_limit_exceeded",
	"counter_decision_logs_encoding_failure",
}

// Stats are the events the plugin took and those lost since start-up:
// refused at Log, or dropped by the plugin. A chunk the plugin could not
// upload goes back to its buffer as one item; dropped later, it counts as
// one.
func (s *Shipper) Stats() (written, lost int64) {
	all := s.counters.All()
	lost = s.failed.Load()
	for _, name := range dropCounters {
		if n, ok := all[name].(uint64); ok {
			lost += int64(n)
		}
	}
	return s.written.Load(), lost
}
