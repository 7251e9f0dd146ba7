package validate

// The optional request parameters other than messages and tools.

// scalars checks the simple optional members of the params.
func (c *checker) scalars(doc Document) {
	if c.optional(ruleSystemPrompt, "", doc, "systemPrompt", kindString) {
		c.text("", "systemPrompt", doc["systemPrompt"].(string))
	}
	c.optional(ruleTemperature, "", doc, "temperature", kindNumber)
	c.optional(ruleMetadata, "", doc, "metadata", kindObject)
	if c.optional(ruleStopSequences, "", doc, "stopSequences", kindArray) {
		for i, s := range doc["stopSequences"].([]any) {
			if _, ok := s.(string); !ok {
				c.add(ruleStopSequences, index("/stopSequences", i), "stop sequence must be a string, got %s", kindOf(s))
			}
		}
	}
}

// priorities are the ModelPreferences members that range over 0..1.
var priorities = []string{"costPriority", "speedPriority", "intelligencePriority"}

// modelPreferences checks the advisory model selection hints (schema
// ModelPreferences). Hint objects are closed to names other than "name": the schema
// leaves other keys to the client, and a firewall forwards only what it
// understands.
func (c *checker) modelPreferences(doc Document) {
	const path = "/modelPreferences"
	if !c.optional(ruleModelPrefs, "", doc, "modelPreferences", kindObject) {
		return
	}
	mp := doc["modelPreferences"].(map[string]any)
	c.unknownKeys(path, mp, keys(append([]string{"hints"}, priorities...)...))
	for _, k := range priorities {
		if v, ok := mp[k]; ok && !unit(v) {
			c.add(ruleModelPrefs, child(path, k), "%s must be a number in 0..1", k)
		}
	}
	if c.optional(ruleModelPrefs, path, mp, "hints", kindArray) {
		for i, h := range mp["hints"].([]any) {
			c.hint(index(path+"/hints", i), h)
		}
	}
}

// hint checks one ModelHint.
func (c *checker) hint(path string, v any) {
	h, ok := v.(map[string]any)
	if !ok {
		c.add(ruleModelPrefs, path, "hint must be an object, got %s", kindOf(v))
		return
	}
	c.unknownKeys(path, h, keys("name"))
	c.optional(ruleModelPrefs, path, h, "name", kindString)
}

// contextValues are the values includeContext may take.
var contextValues = map[string]bool{"none": true, "thisServer": true, "allServers": true}

// includeContext checks the value and that a value other than "none" was
// allowed by the sampling.context capability the firewall advertised.
func (c *checker) includeContext(doc Document) {
	const path = "/includeContext"
	v, ok := doc["includeContext"]
	if !ok {
		return
	}
	s, isStr := v.(string)
	switch {
	case !isStr:
		c.add(ruleIncludeContext, path, "includeContext must be a string, got %s", kindOf(v))
	case !contextValues[s]:
		c.add(ruleIncludeContext, path, "includeContext must be none, thisServer or allServers, got %s", quote(s))
	case s != "none" && !c.caps.Context:
		c.add(ruleContextCap, path, "includeContext %s needs the sampling.context capability", quote(s))
	}
}

// task checks the experimental task-augmentation member of 2025-11-25.
func (c *checker) task(doc Document) {
	if !c.optional(ruleTask, "", doc, "task", kindObject) {
		return
	}
	t := doc["task"].(map[string]any)
	c.unknownKeys("/task", t, keys("ttl"))
	c.optional(ruleTask, "/task", t, "ttl", kindNumber)
}
