package engine

// ShadowKey is the member of a decision-log event's custom object that
// holds the shadow policy's result (OPA's EventV1 carries whatever a
// decider adds there in custom): revision, outcome, reasons (their codes
// alone: a shadow's messages are not logged), error (as the event's own,
// masked unless content is logged), skipped (why the shadow did not run:
// validation, policy-not-run, queue-full, stopping) and
// timer_rego_query_eval_ns.
const ShadowKey = "shadow"

// shadowCustom is r as a log event's custom object.
func (d *decisionLog) shadowCustom(r shadowResult) map[string]any {
	out := map[string]any{"revision": r.revision, "outcome": r.verdict.Outcome.String(), "reasons": shadowReasons(r.verdict)}
	if r.skipped != "" {
		out["skipped"] = r.skipped // the active decision's error, if any, is the event's own
	} else if err := newEventError(r.verdict.Err, d.eventErrorText); err != nil {
		out["error"] = err
	}
	if r.eval > 0 {
		out["timer_rego_query_eval_ns"] = r.eval.Nanoseconds()
	}
	return map[string]any{ShadowKey: out}
}

// shadowReasons are v's reason codes, as the result's reasons are
// objects, without their messages; a blocker's violations are named by
// their rules, as the store's decision row names them.
func shadowReasons(v Verdict) []map[string]string {
	out := make([]map[string]string, 0, len(v.Reasons)+len(v.Violations))
	for _, r := range v.Reasons {
		out = append(out, map[string]string{"code": r.Code})
	}
	for _, vi := range v.Violations {
		out = append(out, map[string]string{"code": vi.Rule})
	}
	return out
}

// droppedShadow is the custom object of a decision the shadow did not see.
func droppedShadow(revision, why string) map[string]any {
	return map[string]any{ShadowKey: map[string]any{"revision": revision, "skipped": why}}
}

// eventErrorText is err as an event's error shows it: masked unless
// content is logged.
func (d *decisionLog) eventErrorText(err error) string {
	if d.content {
		return err.Error()
	}
	return d.errorText(err)
}
