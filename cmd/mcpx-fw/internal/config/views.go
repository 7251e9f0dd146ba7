package config

import (
	"github.com/mcpx-fw/mcpx-fw/relay"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// RelayLimits is what the relay holds for upstreams.
func (l Limits) RelayLimits() relay.Limits {
	return relay.Limits{InFlight: l.MaxInFlight, PendingReviews: l.MaxPendingReviews, HeldBytes: int64(l.MaxHeldBytes),
		HostInFlight: l.MaxInFlightPerHost, HostPendingReviews: l.MaxPendingReviewsPerHost, HostHeldBytes: int64(l.MaxHeldBytesPerHost)}
}

// ValidateLimits is the structural part of the limits, for the engine.
func (l Limits) ValidateLimits() validate.Limits {
	return validate.Limits{MaxBytes: l.MaxBytes, MaxDepth: l.MaxDepth, MaxMessages: l.MaxMessages, MaxBlocks: l.MaxBlocks,
		MaxTextBytes: l.MaxTextBytes, MaxBase64Bytes: l.MaxBase64Bytes, MaxTools: l.MaxTools,
		MaxFields: l.MaxFields, MaxEnumValues: l.MaxEnumValues, MaxLabelBytes: l.MaxLabelBytes,
		MaxURLBytes: l.MaxURLBytes, MaxRoots: l.MaxRoots}
}
