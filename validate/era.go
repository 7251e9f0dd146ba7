package validate

// The protocol revisions this package knows. Revision names are dates, so
// they order correctly as strings.
const (
	era20241105 Era = "2024-11-05"
	era20250326 Era = "2025-03-26"
	era20250618 Era = "2025-06-18"
	era20251125 Era = "2025-11-25"
	era20260728 Era = "2026-07-28"
)

// latestEra is what an unknown era is checked as, after era.unknown has
// been reported, so that the other violations still show.
const latestEra = era20260728

var knownEras = map[Era]bool{
	era20241105: true, era20250326: true, era20250618: true,
	era20251125: true, era20260728: true,
}

// eraFeatures says what a revision allows, so checks ask about a feature
// rather than compare dates all over the package.
type eraFeatures struct {
	name          Era
	audio         bool // AudioContent (2025-03-26 on)
	tools         bool // tool_use/tool_result, content arrays, tools, toolChoice, message _meta (2025-11-25 on)
	task          bool // params.task (2025-11-25 only: moved to an extension in 2026-07-28)
	paramsMeta    bool // params._meta (until 2025-11-25: the 2026-07-28 params type has none)
	anyStructured bool // tool_result.structuredContent may be any JSON (2026-07-28); else an object
}

// featuresOf returns the features of era and whether era is known; an
// unknown era gets the latest revision's features.
func featuresOf(era Era) (eraFeatures, bool) {
	known := knownEras[era]
	if !known {
		era = latestEra
	}
	return eraFeatures{
		name:          era,
		audio:         era >= era20250326,
		tools:         era >= era20251125,
		task:          era == era20251125,
		paramsMeta:    era < era20260728,
		anyStructured: era >= era20260728,
	}, known
}
