package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// defaultAnswerModel is the model an operator's answer names unless
// --model says otherwise: the upstream learns that a person wrote it.
const defaultAnswerModel = "human"

func reviewAnswerCommand() *cobra.Command {
	var text, file, model, note string
	c := &cobra.Command{
		Use:   "answer ID (--text T | --file F)",
		Short: "Write the completion for a pending request yourself, in place of the host's model",
		Long: `answer settles a pending request-stage review with a completion you write,
for servers whose config sets operator_answer: true (then sampling works even
with a host that cannot sample, such as the MCP Inspector). The completion is
recorded as written by you, then passes result validation and the result-stage
policy like any other: it may itself be held for review, and a deny still wins.`,
		Args: args(1, `mcpx-fw review answer rv-… --text "…" [--model NAME]`),
		RunE: func(c *cobra.Command, a []string) error {
			if (text == "") == (file == "") {
				return usageError{fmt.Errorf("give the completion with exactly one of --text or --file\nTry: mcpx-fw review answer %s --text \"…\"", a[0])}
			}
			return withStore(c, func(ctx context.Context, rt *runtime) error {
				if file != "" {
					b, err := readAnswerFile(c, file)
					if err != nil {
						return err
					}
					text = string(b)
				}
				return answer(ctx, c, rt, a[0], completionJSON(text, model), note)
			})
		},
	}
	c.Flags().StringVar(&text, "text", "", "the completion's text")
	c.Flags().StringVar(&file, "file", "", "read the completion's text from this file (- for stdin)")
	c.Flags().StringVar(&model, "model", defaultAnswerModel, "the model name the upstream sees")
	c.Flags().StringVar(&note, "note", "", "a note kept with the decision")
	return c
}

func answer(ctx context.Context, c *cobra.Command, rt *runtime, id string, completion json.RawMessage, note string) error {
	it, err := answerItem(ctx, rt, id, completion, note)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.OutOrStdout(), "answered %s (decision %s); serve checks the completion and returns it to the upstream\n", it.ID, it.DecisionID)
	return nil
}

// answerable refuses an answer serve would not take: for a decided item,
// an elicitation or roots request (only the host answers those), a
// completion already held, or a server without operator answers.
func answerable(rt *runtime, it review.Item) error {
	switch {
	case it.State != review.StatePending:
		return withCode(exitFailure, &review.DecidedError{Item: it})
	case render.ItemKind(it) != engine.KindSampling:
		return withCode(exitFailure, fmt.Errorf("%s is %s, which the host answers: an operator writes only completions (sampling); approve it or reject it", it.ID, render.ItemKind(it)))
	case it.Stage != review.StageRequest:
		return withCode(exitFailure, fmt.Errorf("%s holds a completion already; change it with: mcpx-fw review approve %s --edit", it.ID, it.ID))
	case !rt.cfg.Servers[it.Server].OperatorAnswer:
		return withCode(exitFailure, fmt.Errorf("%s: operator answers are off for server %s; set servers.%s.operator_answer: true", it.ID, it.Server, it.Server))
	}
	return nil
}

// completionJSON is the CreateMessageResult an operator's text becomes.
func completionJSON(text, model string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"role":       "assistant",
		"model":      model,
		"content":    map[string]any{"type": "text", "text": text},
		"stopReason": "endTurn",
	})
	return b
}

func readAnswerFile(c *cobra.Command, file string) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(c.InOrStdin())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, usageError{fmt.Errorf("--file: %w", err)}
	}
	return b, nil
}
