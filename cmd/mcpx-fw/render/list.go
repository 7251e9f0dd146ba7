package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// ItemJSON is the machine-readable shape of a review: what list --json,
// show --json and watch --json print of every item.
type ItemJSON struct {
	ID        string          `json:"id"`
	Server    string          `json:"server"`
	Kind      string          `json:"kind"` // sampling, elicitation or roots
	Stage     string          `json:"stage"`
	State     string          `json:"state"`
	CreatedAt time.Time       `json:"created_at"`
	ExpiresAt time.Time       `json:"expires_at"`
	Reasons   []review.Reason `json:"reasons"`
	// show only:
	DecisionID string          `json:"decision_id,omitempty"`
	Waived     []review.Reason `json:"waived,omitempty"` // baseline reasons the server's policy waived
	Label      string          `json:"label,omitempty"`
	Era        string          `json:"era,omitempty"`
	DecidedBy  string          `json:"decided_by,omitempty"`
	Note       string          `json:"note,omitempty"`
	Request    json.RawMessage `json:"request,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Parent     string          `json:"parent,omitempty"`
	DecidedAt  time.Time       `json:"decided_at,omitzero"`
	Edited     json.RawMessage `json:"edited,omitempty"`
	EditDiff   string          `json:"edit_diff,omitempty"`
	Answer     json.RawMessage `json:"answer,omitempty"`
	ErasedAt   time.Time       `json:"erased_at,omitzero"`
}

func Summary(it review.Item) ItemJSON {
	reasons := it.Reasons
	if reasons == nil {
		reasons = []review.Reason{}
	}
	return ItemJSON{ID: it.ID, Server: it.Server, Kind: string(ItemKind(it)), Stage: it.Stage, State: string(it.State),
		CreatedAt: it.CreatedAt.UTC(), ExpiresAt: it.ExpiresAt.UTC(), Reasons: reasons}
}

// ListItemJSON is one item of list --json: the summary, and what is left
// of its server's budget (null: the server has no budget).
type ListItemJSON struct {
	ItemJSON
	BudgetLeft *BudgetLeft `json:"budget_left"`
}

func ListJSON(items []review.Item, budgets map[string]*BudgetLeft) []ListItemJSON {
	out := make([]ListItemJSON, len(items))
	for i, it := range items {
		out[i] = ListItemJSON{ItemJSON: Summary(it), BudgetLeft: budgets[it.Server]}
	}
	return out
}

// ShowItemJSON is show --json: everything stored, and the cost.
type ShowItemJSON struct {
	ItemJSON
	Cost *CostJSON `json:"cost"`
}

func ShowJSON(it review.Item, c Cost) ShowItemJSON {
	j := Summary(it)
	j.DecisionID, j.Label, j.Era, j.DecidedBy, j.Note = it.DecisionID, it.Label, it.Era, it.DecidedBy, it.Note
	j.Waived = it.Waived
	j.Request, j.Result, j.Parent, j.DecidedAt = it.Request, it.Result, it.Parent, it.DecidedAt
	j.Edited, j.EditDiff, j.Answer, j.ErasedAt = it.Edited, it.EditDiff, it.Answer, it.ErasedAt
	return ShowItemJSON{ItemJSON: j, Cost: costToJSON(c)}
}

// List prints the queue as a table: what waits, from whom, what is
// left of the server's budget (budgets, by server; — for none), why.
// Every cell goes through inert, which also keeps a tab from making a
// column of its own.
func List(w io.Writer, items []review.Item, budgets map[string]*BudgetLeft, now time.Time) {
	if len(items) == 0 {
		fmt.Fprintln(w, "no reviews waiting (mcpx-fw review list --all shows decided ones)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSERVER\tKIND\tSTAGE\tSTATE\tLEFT\tBUDGET LEFT\tREASONS")
	for _, it := range items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", inert.Word(it.ID), inert.Line(it.Server), inert.Word(string(ItemKind(it))), inert.Word(it.Stage),
			inert.Word(string(it.State)), left(it, now), budgets[it.Server].String(), ReasonCodes(it.Reasons))
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "\nmcpx-fw review show ID shows the whole request and the commands to decide it.")
}

// ReasonCodes lists the reasons' codes, each through inert.Word (a policy
// may build a code from request text; quoted, it cannot pass for two).
func ReasonCodes(rs []review.Reason) string {
	codes := make([]string, len(rs))
	for i, r := range rs {
		codes[i] = inert.Word(r.Code)
	}
	return strings.Join(codes, ", ")
}

func left(it review.Item, now time.Time) string {
	if it.State != review.StatePending {
		return "-"
	}
	d := it.ExpiresAt.Sub(now).Round(time.Second)
	if d < 0 {
		return "0s"
	}
	return d.String()
}

// decodeObject reads stored JSON for show, numbers as they were written;
// anything but an object shows as an empty one.
func decodeObject(raw json.RawMessage) map[string]any {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil {
		m = map[string]any{}
	}
	return m
}

func orNone(v any) any {
	if v == nil || v == "" {
		return "none"
	}
	return v
}

func shellQuote(s string) string {
	if strings.ContainsAny(s, " '\"$`\\") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

// Arrival lays out one new item for watch: a short block with the
// reasons and the commands, its rows cut for the layout s but for the
// commands, printed whole to be copied. Every string of the item goes
// through inert.
func Arrival(out io.Writer, s Layout, it review.Item, show string, acts []Action) error {
	w := s.Rows(out)
	fmt.Fprintf(w, "%s  %s (%s)  %s %s  expires %s\n", inert.Word(it.ID), inert.Line(it.Server), inert.Line(it.Label),
		inert.Word(string(ItemKind(it))), inert.Word(it.Stage), it.ExpiresAt.Local().Format(time.TimeOnly))
	writeLines(w, fmt.Sprintf("  %-8s ", "why:"), reasonLines(it.Reasons))
	commands := fmt.Sprintf("  %-8s %s\n", "look:", show)
	for _, a := range acts {
		commands += fmt.Sprintf("  %-8s %s\n", a.Name+":", a.Command)
	}
	return w.whole(commands + "\n")
}
