package engine

// rootsFacts are a roots list's facts: how many roots the host listed and
// their URIs, in order, for rules that narrow or refuse the list. The
// request ({}) says nothing, so at the request stage there are none.
func rootsFacts(res map[string]any) map[string]any {
	roots, _ := res["roots"].([]any)
	uris := make([]any, 0, len(roots))
	for _, r := range roots {
		if rm, ok := r.(map[string]any); ok {
			if uri, ok := rm["uri"].(string); ok {
				uris = append(uris, uri)
			}
		}
	}
	return map[string]any{"root_count": len(roots), "root_uris": uris}
}
