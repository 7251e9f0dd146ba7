package console

// queuePage is the queue's page; the list in it is queueList, which the
// page's script fetches again on each change event.
func queuePage(m *markup, items []Summary) {
	m.head("Queue")
	m.raw(`<h1>Pending reviews</h1>
<p class="hint">This list updates itself as reviews arrive and are decided.</p>
<div id="queue" data-live="/queue">`)
	queueList(m, items)
	m.raw("</div>\n")
	m.foot()
}

// queueList is the pending reviews' table, or a line saying there are
// none.
func queueList(m *markup, items []Summary) {
	if len(items) == 0 {
		m.raw(`<p class="empty">Nothing is waiting for review.</p>`)
		return
	}
	m.raw(`
<table class="queue">
<thead><tr><th>Review</th><th>Server</th><th>Kind</th><th>Stage</th><th>Why</th><th>Time left</th></tr></thead>
<tbody>
`)
	for _, it := range items {
		queueRow(m, it)
	}
	m.raw("\n</tbody>\n</table>\n")
}

// queueRow is one review in the queue's table.
func queueRow(m *markup, it Summary) {
	m.raw(`<tr>
<td><a class="review-link" href="`)
	m.reviewPath(it.ID, "")
	m.raw(`">`)
	m.word(it.ID)
	m.raw("</a></td>\n<td>")
	m.line(it.Server)
	m.raw(`<br><span class="label">`)
	m.line(it.Label)
	m.raw("</span></td>\n<td>")
	m.word(it.Kind)
	m.raw("</td>\n<td>")
	m.word(it.Stage)
	m.raw("</td>\n<td>")
	for _, r := range it.Reasons {
		m.raw("<div>")
		m.line(r)
		m.raw("</div>")
	}
	m.raw("</td>\n<td>")
	m.left(it.ExpiresAt)
	m.raw("</td>\n</tr>")
}
