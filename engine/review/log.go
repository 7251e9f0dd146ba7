package review

import "go.uber.org/zap"

// Log field names shared with the rest of mcpx-fw. Items are logged by id,
// server and size: request and result text never reach a log line.
func itemFields(it Item) []zap.Field {
	return []zap.Field{
		zap.String("review_id", it.ID),
		zap.String("decision_id", it.DecisionID),
		zap.String("server", it.Server),
		zap.String("stage", it.Stage),
		zap.String("state", string(it.State)),
	}
}
