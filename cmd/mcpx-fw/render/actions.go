package render

import (
	"fmt"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// action is one thing an operator can do with a pending item: the exact
// command, and in plain words what it does, so a person who never read the
// code can decide from show (or watch) alone.
type Action struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Effect  string `json:"effect"`
}

// Actions lists what can be done with a pending item, for an operator
// using configPath ("" when none was given) and a server config that may
// allow operator answers.
func Actions(it review.Item, configPath string, answers bool) []Action {
	cmd := func(verb, extra string) string { return ReviewCommand(verb, it, configPath, extra) }
	kind := ItemKind(it)
	var out []Action
	switch {
	case it.Stage == review.StageResult && kind == engine.KindSampling:
		out = append(out,
			Action{"approve", cmd("approve", ""), "deliver this completion to the upstream"},
			Action{"edit", cmd("approve", " --edit"), "change or redact its text first, then deliver it"})
	case it.Stage == review.StageResult && kind == engine.KindElicitation:
		out = append(out, Action{"approve", cmd("approve", ""), "deliver the user's answer to the upstream"})
	case it.Stage == review.StageResult:
		out = append(out, Action{"approve", cmd("approve", ""), "deliver this list to the upstream"})
	case !HostOffers(it):
	case kind == engine.KindSampling:
		out = append(out,
			Action{"approve", cmd("approve", ""), "let the host's model answer it as shown"},
			Action{"edit", cmd("approve", " --edit"), "change the prompt first, then let the model answer"})
	case kind == engine.KindElicitation:
		out = append(out,
			Action{"approve", cmd("approve", ""), "let the host ask the user as shown"},
			Action{"edit", cmd("approve", " --edit"), "change the message or the fields' texts first, then let the host ask"})
	default:
		out = append(out, Action{"approve", cmd("approve", ""), "let the host answer (its answer is checked again)"})
	}
	if answers && it.Stage == review.StageRequest && kind == engine.KindSampling {
		out = append(out, Action{"answer", cmd("answer", ` --text "…"`), "write the completion yourself (the upstream sees model \"human\")"})
	}
	return append(out, Action{"reject", cmd("reject", ` --reason "…"`), "refuse it: " + RejectEffect(it) + "; the reason stays here"})
}

// ReviewCommand is the exact command line to run verb on it, with the
// operator's --config when they gave one. The id goes through inert.Word
// (ids are the store's own, but read back from a file); the config path is
// the operator's own, and anything in it reaches the terminal only
// through the sink.
func ReviewCommand(verb string, it review.Item, configPath, extra string) string {
	cfg := ""
	if configPath != "" {
		cfg = " --config " + shellQuote(configPath)
	}
	return fmt.Sprintf("mcpx-fw review %s %s%s%s", verb, inert.Word(it.ID), cfg, extra)
}

// HostOffers reports whether the host the item's request came through
// declared the capability its kind needs (sampling, elicitation, roots);
// when unknown, it assumes so and lets serve decide.
func HostOffers(it review.Item) bool {
	s, err := ItemRequest(it)
	if err != nil || s.Host.Capabilities == nil {
		return true
	}
	_, ok := s.Host.Capabilities[string(ItemKind(it))]
	return ok
}

// renderActions prints the actions as the end of show, each command
// whole so that it can be copied.
func renderActions(w *RowWriter, it review.Item, acts []Action) {
	fmt.Fprintf(w, "\nTo decide (if nobody does by %s, %s):\n", it.ExpiresAt.Format("15:04:05 MST"), expiryWords(it))
	for _, a := range acts {
		_ = w.whole("  " + a.Command + "\n")
		fmt.Fprintf(w, "      %s\n", a.Effect)
	}
}
