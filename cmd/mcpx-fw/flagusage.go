package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// plainBoolUsage makes every command's help list a boolean flag as
// cobra's own template shows one ("-h, --help   help for list"): pflag
// writes it "--help[=true|false]", which teaches nothing a person needs.
// The template is cobra's, with the flag lists written by flagUsages.
func plainBoolUsage(root *cobra.Command) {
	cobra.AddTemplateFunc("flagUsages", flagUsages)
	t := strings.NewReplacer(".LocalFlags.FlagUsages", "flagUsages .LocalFlags",
		".InheritedFlags.FlagUsages", "flagUsages .InheritedFlags").Replace(root.UsageTemplate())
	root.SetUsageTemplate(t)
}

// flagUsages is fs.FlagUsages with every boolean flag's value a
// plainBool.
func flagUsages(fs *pflag.FlagSet) string {
	plain := pflag.NewFlagSet(fs.Name(), pflag.ContinueOnError)
	plain.SortFlags = fs.SortFlags
	fs.VisitAll(func(f *pflag.Flag) {
		g := *f
		if f.Value.Type() == "bool" {
			g.Value = plainBool{f.Value}
		}
		plain.AddFlag(&g)
	})
	return plain.FlagUsages()
}

// plainBool is a boolean flag's value without its IsBoolFlag method,
// which is what makes pflag's usage add "[=true|false]"; the flag still
// takes no value, as its NoOptDefVal says.
type plainBool struct{ pflag.Value }
