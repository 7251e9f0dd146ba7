package console

// reviewPage is one review: its facts, why it needs review (and what the
// server's policy waived), a refused
// action's refusal, the actions while it is pending, and everything in it.
func reviewPage(m *markup, csrf string, v reviewView) {
	m.head("Review")
	reviewFacts(m, v.Review)
	m.raw("<h2>Why it needs review</h2>\n<ul class=\"reasons\">")
	for _, r := range v.Reasons {
		m.raw("<li>")
		m.line(r)
		m.raw("</li>")
	}
	for _, r := range v.Waived {
		m.raw("<li class=\"waived\">waived by the server's policy: ")
		m.line(r)
		m.raw("</li>")
	}
	m.raw("</ul>\n")
	if v.Error != "" {
		m.raw(`<div class="refusal" id="refusal" role="alert"><strong>Refused; the review is still as shown.</strong><pre>`)
		m.text(v.Error)
		m.raw("</pre></div>\n")
	}
	if v.State == "pending" {
		approveForm(m, csrf, v)
		if v.Answerable {
			answerForm(m, csrf, v.ID)
		}
		rejectForm(m, csrf, v.ID)
	}
	m.raw("<h2>Everything in this review</h2>\n<pre class=\"show\" id=\"show\">")
	m.sink(v.Show)
	m.raw("</pre>\n")
	m.foot()
}

// reviewFacts is the review's heading and its list of facts.
func reviewFacts(m *markup, r Review) {
	m.raw("<h1>Review ")
	m.word(r.ID)
	m.raw("</h1>\n<dl class=\"facts\">\n<dt>Server</dt><dd>")
	m.line(r.Server)
	m.raw(" — ")
	m.line(r.Label)
	m.raw("</dd>\n<dt>Kind</dt><dd>")
	m.word(r.Kind)
	m.raw(", ")
	m.word(r.Stage)
	m.raw(" stage</dd>\n<dt>State</dt><dd id=\"state\">")
	m.word(r.State)
	if r.Decided != "" {
		m.raw(" — ")
		m.line(r.Decided)
	}
	m.raw("</dd>\n<dt>Decision</dt><dd>")
	m.word(r.DecisionID)
	m.raw("</dd>\n<dt>Time left</dt><dd>")
	if r.State == "pending" {
		m.left(r.ExpiresAt)
		m.raw(" (until ")
		m.when(r.ExpiresAt)
		m.raw(")")
	} else {
		m.raw("—")
	}
	m.raw("</dd>\n<dt>Policy revision</dt><dd>")
	m.word(r.Revision)
	m.raw("</dd>\n</dl>\n")
}

// actionForm opens the form that posts to the review's action, with the
// session's CSRF token.
func actionForm(m *markup, csrf, id, action string) {
	m.raw(`<form method="post" action="`)
	m.reviewPath(id, "/"+action)
	m.raw(`" class="` + action + `">
<input type="hidden" name="csrf" value="`)
	m.esc(csrf)
	m.raw("\">\n")
}

// approveForm is the edit box (the document the approval sends), the
// cost, and the approve button or why there is none.
func approveForm(m *markup, csrf string, v reviewView) {
	actionForm(m, csrf, v.ID, "approve")
	if v.Doc != "" {
		what, whom := "The request", "host's model"
		if v.Stage == "result" {
			what, whom = "The completion", "upstream"
		}
		m.raw("<h2>" + what + ", as the " + whom + ` will get it</h2>
<p class="hint">Read it here, and edit it here: approving sends what this box says (left unchanged, the item as it is). `)
		m.line(v.DocNote)
		m.raw("</p>\n<textarea name=\"doc\" id=\"doc\" rows=\"24\" spellcheck=\"false\">")
		m.sink(v.Doc)
		m.raw("</textarea>\n")
	} else {
		m.raw(`<p class="hint">`)
		m.line(v.DocNote)
		m.raw("</p>\n")
	}
	costBlock(m, v.Cost, v.CostErr)
	if v.Approvable {
		m.raw(`<label>Note <input name="note" autocomplete="off"></label>
<button type="submit" id="approve">Approve</button>
`)
	} else {
		m.raw(`<p class="blocked" id="no-approve">No approval: `)
		m.text(v.Refusal)
		m.raw("</p>\n")
	}
	m.raw("</form>\n")
}

// costBlock is what an approval spends: the request's tokens and the
// server's use and budget per window.
func costBlock(m *markup, c Cost, unread bool) {
	m.raw("<div class=\"cost\" id=\"cost\">\n")
	if unread {
		m.raw("<p>Usage could not be read.</p>\n</div>\n")
		return
	}
	m.raw("<p>Estimated tokens: <strong>")
	m.int(c.EstimatedTokens)
	m.raw("</strong> · maxTokens: <strong>")
	m.int(c.MaxTokens)
	m.raw("</strong></p>\n<table><thead><tr><th>Window</th><th>Requests</th><th>Tokens</th><th>Budget</th></tr></thead><tbody>\n")
	for _, w := range c.Windows {
		m.raw("<tr><td>")
		m.esc(w.Name)
		m.raw("</td><td>")
		m.int(w.Requests)
		m.raw("</td><td>")
		m.int(w.Tokens)
		m.raw("</td><td>")
		budget(m, w)
		m.raw("</td></tr>")
	}
	m.raw("\n</tbody></table>\n</div>\n")
}

// budget is a window's budget, or "none".
func budget(m *markup, w Window) {
	if w.BudgetTokens != 0 {
		m.int(w.BudgetTokens)
		m.raw(" tokens")
	}
	if w.BudgetRequests != 0 {
		m.raw(" ")
		m.int(w.BudgetRequests)
		m.raw(" requests")
	}
	if w.BudgetTokens == 0 && w.BudgetRequests == 0 {
		m.raw("none")
	}
}

// answerForm lets the operator write the completion themselves.
func answerForm(m *markup, csrf, id string) {
	actionForm(m, csrf, id, "answer")
	m.raw(`<h2>Answer it yourself</h2>
<textarea name="text" id="answer-text" rows="6"></textarea>
<button type="submit" id="answer">Send this completion</button>
</form>
`)
}

// rejectForm rejects the review with a reason kept here.
func rejectForm(m *markup, csrf, id string) {
	actionForm(m, csrf, id, "reject")
	m.raw(`<label>Reason (kept here, never sent to the upstream) <input name="reason" id="reason" autocomplete="off"></label>
<button type="submit" id="reject">Reject</button>
</form>
`)
}
