package validate

// Limits bound what one request or result may cost to parse and to forward.
// They are structural caps that keep the firewall itself safe; budgets such
// as a maximum maxTokens are policy and do not belong here. A zero or
// negative field takes its value from DefaultLimits. Their tags are the
// keys of cmd's limits: section.
type Limits struct {
	MaxBytes       int `mapstructure:"max_bytes"`        // whole params or result, in bytes; default 4 MiB
	MaxDepth       int `mapstructure:"max_depth"`        // nesting of objects and arrays, the root counting 1; default 32
	MaxMessages    int `mapstructure:"max_messages"`     // entries of messages; default 1000
	MaxBlocks      int `mapstructure:"max_blocks"`       // content blocks in one message or one tool_result; default 100
	MaxTextBytes   int `mapstructure:"max_text_bytes"`   // bytes of one text field (a text block, systemPrompt); default 1 MiB
	MaxBase64Bytes int `mapstructure:"max_base64_bytes"` // encoded bytes of one base64 field (data, blob); default 3 MiB
	MaxTools       int `mapstructure:"max_tools"`        // entries of tools; default 128
	MaxFields      int `mapstructure:"max_fields"`       // properties of an elicitation form; default 100
	MaxEnumValues  int `mapstructure:"max_enum_values"`  // options of one form field (enum, oneOf, items); default 500
	MaxLabelBytes  int `mapstructure:"max_label_bytes"`  // bytes of one field name, title, description, option, elicitationId or root name; default 16 KiB
	MaxURLBytes    int `mapstructure:"max_url_bytes"`    // bytes of an elicitation URL; default 8 KiB
	MaxRoots       int `mapstructure:"max_roots"`        // entries of a roots list; default 1000
}

// DefaultLimits returns the limits used where Options.Limits leaves a field
// unset. They admit every realistic conversation while keeping one request
// far below what would strain memory.
func DefaultLimits() Limits {
	return Limits{
		MaxBytes:       4 << 20,
		MaxDepth:       32,
		MaxMessages:    1000,
		MaxBlocks:      100,
		MaxTextBytes:   1 << 20,
		MaxBase64Bytes: 3 << 20,
		MaxTools:       128,
		MaxFields:      100,
		MaxEnumValues:  500,
		MaxLabelBytes:  16 << 10,
		MaxURLBytes:    8 << 10,
		MaxRoots:       1000,
	}
}

// resolved fills every unset field from DefaultLimits, so callers may set
// only the limits they care about.
func (l Limits) resolved() Limits {
	d := DefaultLimits()
	pick := func(v, def int) int {
		if v > 0 {
			return v
		}
		return def
	}
	return Limits{
		MaxBytes:       pick(l.MaxBytes, d.MaxBytes),
		MaxDepth:       pick(l.MaxDepth, d.MaxDepth),
		MaxMessages:    pick(l.MaxMessages, d.MaxMessages),
		MaxBlocks:      pick(l.MaxBlocks, d.MaxBlocks),
		MaxTextBytes:   pick(l.MaxTextBytes, d.MaxTextBytes),
		MaxBase64Bytes: pick(l.MaxBase64Bytes, d.MaxBase64Bytes),
		MaxTools:       pick(l.MaxTools, d.MaxTools),
		MaxFields:      pick(l.MaxFields, d.MaxFields),
		MaxEnumValues:  pick(l.MaxEnumValues, d.MaxEnumValues),
		MaxLabelBytes:  pick(l.MaxLabelBytes, d.MaxLabelBytes),
		MaxURLBytes:    pick(l.MaxURLBytes, d.MaxURLBytes),
		MaxRoots:       pick(l.MaxRoots, d.MaxRoots),
	}
}
