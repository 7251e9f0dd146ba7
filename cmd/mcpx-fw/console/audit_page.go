package console

// auditPage is the audit log, what verifying its chain found, and the
// revision deciding now.
func auditPage(m *markup, a Audit) {
	m.head("Audit log")
	m.raw("<h1>Audit log</h1>\n<p class=\"")
	if a.Intact {
		m.raw("ok")
	} else {
		m.raw("broken")
	}
	m.raw(`" id="verify">`)
	m.text(a.Verified)
	m.raw("</p>\n<p>Policy revision deciding now: ")
	m.word(a.Revision)
	m.raw(`</p>
<table class="audit">
<thead><tr><th>#</th><th>Time</th><th>Event</th><th>Review</th><th>Server</th><th>Stage</th><th>Operator</th><th>Outcome</th><th>Decision</th><th>Policy</th></tr></thead>
<tbody>
`)
	for _, e := range a.Entries {
		auditRow(m, e)
	}
	m.raw("\n</tbody>\n</table>\n")
	m.foot()
}

// auditRow is one entry of the log.
func auditRow(m *markup, e AuditEntry) {
	m.raw("<tr><td>")
	m.int(e.Seq)
	m.raw("</td><td>")
	m.when(e.At)
	for _, cell := range []struct {
		s    string
		line bool
	}{{e.Event, false}, {e.Item, false}, {e.Server, true}, {e.Stage, false}, {e.Operator, true},
		{e.Outcome, false}, {e.Decision, false}, {e.Policy, false}} {
		m.raw("</td><td>")
		if cell.line {
			m.line(cell.s)
		} else {
			m.word(cell.s)
		}
	}
	m.raw("</td></tr>")
}
