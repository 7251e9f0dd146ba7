package engine

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/open-policy-agent/opa/v1/plugins/logs"
	"github.com/open-policy-agent/opa/v1/topdown"
	"go.opentelemetry.io/otel/trace"
)

// BundleName names mcpx-fw's policy in an event's bundles, as OPA names
// each bundle it decided with: one policy, one name, its revision beside it.
const BundleName = "mcpxfw"

// envelope is what every event of one revision and stage shares: the
// labels and bundles maps, built once per revision instead of per event
// (events only read them; the service sink's plugin builds its own).
type envelope struct {
	revision string
	labels   map[Stage]map[string]string
	bundles  map[string]logs.BundleInfoV1
}

func newEnvelope(revision string) *envelope {
	env := &envelope{revision: revision, labels: map[Stage]map[string]string{},
		bundles: map[string]logs.BundleInfoV1{BundleName: {Revision: revision}}}
	for _, st := range []Stage{StageRequest, StageResult} {
		env.labels[st] = map[string]string{"policy_revision": revision, "stage": string(st)}
	}
	return env
}

// labelsOf is the labels of a decision at stage.
func (env *envelope) labelsOf(stage Stage) map[string]string {
	if l, ok := env.labels[stage]; ok {
		return l
	}
	return map[string]string{"policy_revision": env.revision, "stage": string(stage)}
}

// newEvent is one decision as OPA's own decision-log type, so what reads
// OPA's logs reads ours and the service sink ships it unchanged. input and
// result are the JSON the logEncoder wrote (masked unless content is
// logged): boxed as json.RawMessage, json.Marshal copies them in as they
// are, and nothing builds a masked copy of the input just to encode it.
// The labels are the file sink's (policy_revision, stage); the service
// sink's plugin replaces them with its manager's (see engine/logship).
func newEvent(v Verdict, env *envelope, input, result json.RawMessage, masked bool, err error, metrics map[string]any) logs.EventV1 {
	var in, res any = input, result
	ev := logs.EventV1{
		Labels:     env.labelsOf(v.Stage),
		DecisionID: v.DecisionID,
		Bundles:    env.bundles,
		Path:       decisionPath,
		Input:      &in,
		Result:     &res,
		Timestamp:  time.Now().UTC(),
	}
	if masked {
		ev.Masked = maskedPaths
	}
	if err != nil {
		ev.Error = err
	}
	if len(metrics) > 0 {
		ev.Metrics = metrics
	}
	return ev
}

// eventError is a decision's error as the event carries it: OPA logs its
// evaluation errors as objects with a code and a message (topdown.Error),
// and EventV1 marshals whatever error it holds by its fields, so a plain
// error would be logged as {}. Message is masked as the log's other texts
// are.
type eventError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *eventError) Error() string { return e.Message }

// codeInternal is OPA's code for an error that is not an evaluation's.
const codeInternal = "internal_error"

// newEventError is err for the event, its text as text gives it; nil for
// none.
func newEventError(err error, text func(error) string) error {
	if err == nil || err.Error() == "" {
		return nil
	}
	code := codeInternal
	if te, ok := errors.AsType[*topdown.Error](err); ok && te.Code != "" {
		code = te.Code
	}
	return &eventError{Code: code, Message: text(err)}
}

// traced names, as OPA's events do, the trace and span a decision was made
// in (the relay's decision span, when tracing is on), so a log line leads to
// its trace. Both ids are made by the tracer, never read from a request.
func traced(ev *logs.EventV1, span trace.SpanContext) {
	if span.IsValid() {
		ev.TraceID, ev.SpanID = span.TraceID().String(), span.SpanID().String()
	}
}
