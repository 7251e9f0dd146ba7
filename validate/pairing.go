package validate

// Tool pairing (SMP-06; S1125 §Message Content Constraints; V7-V9, doc.go). The spec asks
// the client to refuse a request whose tool uses and tool results do not
// balance; for a firewall the same checks stop an upstream from inventing
// tool results the model never asked for, which is the easiest way to put
// words in the model's mouth.

// toolRef is one tool_use or tool_result block: where it is, the id it
// carries (tool_use.id or tool_result.toolUseId) and, for tool_use, the
// tool it names.
type toolRef struct {
	path, id, name string
}

// turn is the tool-relevant content of one message.
type turn struct {
	path    string
	role    string
	uses    []toolRef
	results []toolRef
	others  int // blocks that are neither tool_use nor tool_result
}

// pairing checks the tool blocks across all messages of a request.
func (c *checker) pairing(doc Document) {
	p := pairer{c: c, tools: toolNames(doc), seen: map[string]bool{}}
	for _, t := range turns(doc, c.lim) {
		p.next(t)
	}
	p.unanswered("it is the last message")
}

// pairer walks the turns in order, holding the tool uses of the previous
// assistant message until the next message answers them.
type pairer struct {
	c       *checker
	tools   map[string]bool // names in tools[]
	seen    map[string]bool // every tool_use id so far
	pending []toolRef       // tool uses awaiting their results
}

func (p *pairer) next(t turn) {
	p.wrongRole(t)
	p.match(t)
	p.mixed(t)
	p.pending = nil
	if t.role == "assistant" {
		p.uses(t.uses)
	}
}

// wrongRole reports tool_use outside assistant messages and tool_result
// outside user messages.
func (p *pairer) wrongRole(t turn) {
	if t.role != "assistant" {
		for _, u := range t.uses {
			p.c.add(ruleToolRole, u.path, "tool_use may only appear in an assistant message")
		}
	}
	if t.role != "user" {
		for _, r := range t.results {
			p.c.add(ruleToolRole, r.path, "tool_result may only appear in a user message")
		}
	}
}

// match matches the results of a user message against the pending uses:
// each pending use needs exactly one result, and each result must answer a
// pending use.
func (p *pairer) match(t turn) {
	var results []toolRef
	if t.role == "user" {
		results = t.results
	}
	open := map[string]bool{}
	for _, u := range p.pending {
		open[u.id] = true
	}
	answered := map[string]bool{}
	for _, r := range results {
		switch {
		case answered[r.id]:
			p.c.add(ruleDuplicateID, r.path+"/toolUseId", "tool use %s is answered more than once", quote(r.id))
		case !open[r.id]:
			p.c.add(rulePairing, r.path+"/toolUseId", "tool_result %s answers no tool_use of the preceding assistant message", quote(r.id))
		}
		answered[r.id] = true
	}
	p.pending = unmatched(p.pending, answered)
	p.unanswered("the next message does not answer it")
}

// unanswered reports every pending tool use as missing its result.
func (p *pairer) unanswered(why string) {
	for _, u := range p.pending {
		p.c.add(rulePairing, u.path, "tool_use %s has no tool_result: %s", quote(u.id), why)
	}
	p.pending = nil
}

// mixed reports a user message that holds tool results next to anything
// else.
func (p *pairer) mixed(t turn) {
	if t.role == "user" && len(t.results) > 0 && (t.others > 0 || len(t.uses) > 0) {
		p.c.add(ruleMixed, t.path+"/content", "a message with tool_result may hold nothing else")
	}
}

// uses records the tool uses of an assistant message: ids must be unique
// in the whole request and names must be tools the request offers.
func (p *pairer) uses(uses []toolRef) {
	for _, u := range uses {
		if p.seen[u.id] {
			p.c.add(ruleDuplicateID, u.path+"/id", "tool use id %s is used more than once", quote(u.id))
		}
		p.seen[u.id] = true
		if u.name != "" && !p.tools[u.name] {
			p.c.add(ruleUnknownTool, u.path+"/name", "tool %s is not among the request's tools", quote(u.name))
		}
		p.pending = append(p.pending, u)
	}
}

// unmatched returns the uses whose id is not in answered.
func unmatched(uses []toolRef, answered map[string]bool) []toolRef {
	var out []toolRef
	for _, u := range uses {
		if !answered[u.id] {
			out = append(out, u)
		}
	}
	return out
}

// turns extracts the tool-relevant content of each message, within the
// message and block limits. Blocks without a usable id are left out:
// their own block check has reported them.
func turns(doc Document, lim Limits) []turn {
	msgs, _ := doc["messages"].([]any)
	msgs = msgs[:min(len(msgs), lim.MaxMessages)]
	out := make([]turn, 0, len(msgs))
	for i, m := range msgs {
		msg, _ := m.(map[string]any)
		t := turn{path: index("/messages", i)}
		t.role, _ = msg["role"].(string)
		t.collect(msg["content"], lim)
		out = append(out, t)
	}
	return out
}

// collect sorts the blocks of one content value into uses, results and
// others.
func (t *turn) collect(content any, lim Limits) {
	path := t.path + "/content"
	for i, b := range blockList(content, lim) {
		at := path
		if _, isArr := content.([]any); isArr {
			at = index(path, i)
		}
		t.add(at, b)
	}
}

func (t *turn) add(path string, b map[string]any) {
	switch b["type"] {
	case "tool_use":
		if id, _ := b["id"].(string); id != "" {
			name, _ := b["name"].(string)
			t.uses = append(t.uses, toolRef{path: path, id: id, name: name})
		}
	case "tool_result":
		if id, _ := b["toolUseId"].(string); id != "" {
			t.results = append(t.results, toolRef{path: path, id: id})
		}
	default:
		t.others++
	}
}

// blockList returns content as a list of block objects: one block, or the
// objects of an array up to the block limit. Indexes match the array, with
// nil for elements that are not objects.
func blockList(content any, lim Limits) []map[string]any {
	switch x := content.(type) {
	case map[string]any:
		return []map[string]any{x}
	case []any:
		x = x[:min(len(x), lim.MaxBlocks)]
		out := make([]map[string]any, len(x))
		for i, b := range x {
			out[i], _ = b.(map[string]any)
		}
		return out
	}
	return nil
}
