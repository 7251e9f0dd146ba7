package config

import (
	"github.com/mcpx-fw/mcpx-fw/relay"
)

// RelayLimits is what the relay holds for upstreams.
func (l Limits) RelayLimits() relay.Limits {
	return relay.Limits{InFlight: l.MaxInFlight, PendingReviews: l.MaxPendingReviews, HeldBytes: int64(l.MaxHeldBytes),
		HostInFlight: l.MaxInFlightPerHost, HostPendingReviews: l.MaxPendingReviewsPerHost, HostHeldBytes: int64(l.MaxHeldBytesPerHost)}
}
