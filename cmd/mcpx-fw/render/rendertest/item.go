package rendertest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// KindItem is a review of kind holding request (and result at the result
// stage when result is set), as the firewall stores it: the kind in the
// item's context.
func KindItem(t testing.TB, kind, request, result string) review.Item {
	t.Helper()
	for _, s := range []string{request, result} {
		if s != "" && !json.Valid([]byte(s)) {
			t.Fatalf("not JSON: %s", s)
		}
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ctx := `{"kind":"` + kind + `","host":{"protocol":"2025-11-25","capabilities":{"elicitation":{"form":{},"url":{}},"roots":{}}}}`
	it := review.Item{ID: "rv-0000000000000001", DecisionID: "dc-0000000000000001", Server: "peer", Label: "Test peer",
		Stage: review.StageRequest, Era: "2025-11-25", State: review.StatePending, CreatedAt: at, ExpiresAt: at.Add(time.Minute),
		Reasons: []review.Reason{{Code: "elicitation-url-host", Message: "the URL's host is not in allowed_hosts"}},
		Request: json.RawMessage(request), Context: json.RawMessage(ctx)}
	if result != "" {
		it.Stage, it.Result, it.Parent = review.StageResult, json.RawMessage(result), "rv-0000000000000000"
	}
	return it
}

const (
	// FormRequest uses every property type a form may hold: strings with
	// lengths and formats, numbers and integers with bounds, a boolean,
	// each enum form of SEP-1330 (untitled, titled with oneOf, legacy
	// enumNames, multi-select untitled and titled) and SEP-1034 defaults.
	FormRequest = `{"mode":"form","message":"Please tell us about yourself.\nWe use it to set up your account.","requestedSchema":{"type":"object",
	 "properties":{
	  "name":{"type":"string","title":"Full name","description":"As on your passport","minLength":1,"maxLength":100,"default":"Ann Example"},
	  "email":{"type":"string","format":"email","title":"Email"},
	  "birthday":{"type":"string","format":"date"},
	  "age":{"type":"integer","minimum":18,"maximum":130,"default":30},
	  "height":{"type":"number","minimum":0.5,"maximum":2.5,"description":"in metres"},
	  "newsletter":{"type":"boolean","title":"Send me news","default":false},
	  "size":{"type":"string","enum":["s","m","l"],"default":"m"},
	  "color":{"type":"string","title":"Colour","oneOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]},
	  "plan":{"type":"string","enum":["free","pro"],"enumNames":["Free plan","Pro plan"]},
	  "days":{"type":"array","title":"Days","minItems":1,"maxItems":2,"items":{"type":"string","enum":["mon","tue","wed"]},"default":["mon"]},
	  "tags":{"type":"array","items":{"anyOf":[{"const":"a","title":"Alpha"},{"const":"b","title":"Beta"}]}}},
	 "required":["name","email","color"]}}`
	// FormAnswer fills the form, leaves a field out and adds a key the
	// form does not have.
	FormAnswer = `{"action":"accept","content":{"name":"Ann Example","email":"ann@example.com","age":31,"newsletter":true,
	 "color":"g","days":["mon","tue"],"tags":["b"],"unasked":"extra"}}`
)
