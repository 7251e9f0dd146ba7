package logship

import (
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/plugins/logs"
	"github.com/open-policy-agent/opa/v1/server"
)

// info is ev as the plugin takes a decision: the server.Info OPA's own
// server hands it, from which Plugin.Log builds the same EventV1 again,
// labels aside (it puts its manager's on). Only the members engine fills
// travel; the rest of Info (a transaction, a trace, an HTTP request)
// has no meaning here. InputAST is an empty object: Plugin.Log converts
// the input to Rego's AST only for its mask and drop policies (the upload
// marshals Input itself), and with the manager's empty store those are
// undefined for every event, so that conversion, a JSON round trip of the
// whole input on the deciding goroutine costing more than the decision's
// own log line, is skipped. Should a mask policy ever be defined here, it
// sees nothing rather than the text.
func info(ev logs.EventV1, shared metrics.Metrics) *server.Info {
	bundles := make(map[string]server.BundleInfo, len(ev.Bundles))
	for name, b := range ev.Bundles {
		bundles[name] = server.BundleInfo{Revision: b.Revision}
	}
	i := &server.Info{
		DecisionID: ev.DecisionID,
		Bundles:    bundles,
		Path:       ev.Path,
		Timestamp:  ev.Timestamp,
		Input:      ev.Input,
		InputAST:   ast.NewObject(), // see below
		Results:    ev.Result,
		Error:      ev.Error,
		TraceID:    ev.TraceID,
		SpanID:     ev.SpanID,
		Custom:     ev.Custom, // the shadow policy's result, when there is one
	}
	if ev.Metrics != nil {
		i.Metrics = fixedMetrics{Metrics: shared, all: ev.Metrics}
	}
	return i
}

// fixedMetrics gives the plugin an event's metrics as engine measured
// them: Plugin.Log reads a decision's metrics only through All. The
// embedded Metrics answers the rest and is never written by the plugin.
type fixedMetrics struct {
	metrics.Metrics
	all map[string]any
}

func (m fixedMetrics) All() map[string]any { return m.all }
