package relay

// defaultOffers is u configured as cmd configures a server that says
// nothing of sampling, elicitation or roots: each offered when the host
// declares it.
func defaultOffers(u Upstream) Upstream {
	u.Sampling, u.Elicitation.Enabled, u.Roots.Enabled = true, true, true
	return u
}
