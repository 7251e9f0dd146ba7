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
// rather than compare dates all over the package. The sets of member names
// and block types of each era are built once, here.
type eraFeatures struct {
	name          Era
	audio         bool // AudioContent (2025-03-26 on)
	blockMeta     bool // _meta on text/image/audio blocks and annotations.lastModified (2025-06-18 on)
	tools         bool // tool_use/tool_result, content arrays, tools, toolChoice, message _meta (2025-11-25 on)
	task          bool // params.task (2025-11-25 only: moved to an extension in 2026-07-28)
	paramsMeta    bool // params._meta (until 2025-11-25: the 2026-07-28 params type has none)
	anyStructured bool // tool_result.structuredContent may be any JSON (2026-07-28); else an object
	urlElicit     bool // elicitation's URL mode (2025-11-25 on)
	elicitationID bool // URL mode requires elicitationId (2025-11-25 only: 2026-07-28 dropped it)

	paramsKeys   keySet  // members of CreateMessageRequestParams
	messageKeys  keySet  // members of SamplingMessage
	requestTypes typeSet // block types of a request message
	resultTypes  typeSet // block types of a completion
}

// eraTable holds the features of every known era.
var eraTable = func() map[Era]*eraFeatures {
	m := map[Era]*eraFeatures{}
	for era := range knownEras {
		m[era] = newFeatures(era)
	}
	return m
}()

// newFeatures works out the features of a known era.
func newFeatures(era Era) *eraFeatures {
	e := &eraFeatures{
		name:          era,
		audio:         era >= era20250326,
		blockMeta:     era >= era20250618,
		tools:         era >= era20251125,
		task:          era == era20251125,
		paramsMeta:    era < era20260728,
		anyStructured: era >= era20260728,
		urlElicit:     era >= era20251125,
		elicitationID: era == era20251125,
	}
	e.paramsKeys = paramsKeysOf(e)
	e.messageKeys = keys("role", "content")
	if e.tools {
		e.messageKeys = e.messageKeys.with("_meta")
	}
	e.requestTypes = requestTypes(e)
	e.resultTypes = resultTypes(e)
	return e
}

// featuresOf returns the features of era and whether era is known; an
// unknown era gets the latest revision's features.
func featuresOf(era Era) (*eraFeatures, bool) {
	if e, ok := eraTable[era]; ok {
		return e, true
	}
	return eraTable[latestEra], false
}
