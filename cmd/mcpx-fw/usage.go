package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// errorText is what run prints for err. A usage error is one line
// whatever its text holds: the hint a usage error carries on a line of its
// own ("\nTry: …") follows the problem on the same line, so a script or a
// person reads one line per mistake. Any other error keeps its lines, and
// the tabs that indent them (OPA's, under each problem of a policy that
// does not compile) are spaces, so it reads as written instead of as
// escaped tabs (the sink escapes a tab; see package inert).
func errorText(err error) string {
	if !isUsageError(err) {
		return expandTabs(err.Error())
	}
	text := strings.ReplaceAll(err.Error(), "\nTry: ", ". Try: ")
	return strings.ReplaceAll(text, "\n", "; ")
}

// errorLines are the lines run prints for err, each after "mcpx-fw:": one
// for most errors (errorText), and one per problem for a list of problems
// each placed at its own FILE:LINE (a config's), so every such line reads
// the same whichever comes first.
func errorLines(err error) []string {
	var list interface{ Lines() []string }
	if errors.As(err, &list) && err.Error() == strings.Join(list.Lines(), "\n") {
		return list.Lines()
	}
	return []string{errorText(err)}
}

// typedName is a command as the user typed it, without the program's
// name, which run already prints before every error.
func typedName(c *cobra.Command) string {
	if !c.HasParent() {
		return c.Name()
	}
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
}

// argCount says how many positional arguments a command takes.
func argCount(n int) string {
	switch n {
	case 0:
		return "no arguments"
	case 1:
		return "1 argument"
	}
	return fmt.Sprintf("%d arguments", n)
}

// strictGroups makes every command that only groups others (the root,
// review, policy, store) refuse a word that names none of its commands as
// a usage error (exit 2) instead of printing its help and exiting 0, as
// cobra does below the root. Called alone, a group still prints its help.
func strictGroups(c *cobra.Command) {
	for _, sub := range c.Commands() {
		strictGroups(sub)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = unknownCommand
	c.SuggestionsMinimumDistance = 2 // what cobra sets for the root's suggestions
	c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
}

// unknownCommand refuses a group's argument: it names no command of the
// group. It suggests the nearest names, as cobra does for the root.
func unknownCommand(c *cobra.Command, a []string) error {
	if len(a) == 0 {
		return nil
	}
	typed := strings.TrimPrefix(typedName(c)+" "+a[0], c.Root().Name()+" ")
	suggest := ""
	if near := c.SuggestionsFor(a[0]); len(near) > 0 {
		suggest = fmt.Sprintf(" (did you mean %s?)", strings.Join(near, " or "))
	}
	return usageError{fmt.Errorf("unknown command %q%s\nTry: %s --help", typed, suggest, c.CommandPath())}
}

// usageOf marks as a usage error what cobra itself refuses in how a
// command was called: flags given together that exclude each other, or
// a required one left out.
func usageOf(err error) error {
	if err == nil || isUsageError(err) {
		return err
	}
	for _, prefix := range []string{"if any flags in the group", "at least one of the flags in the group", "required flag(s)"} {
		if strings.HasPrefix(err.Error(), prefix) {
			return usageError{err}
		}
	}
	return err
}

// expandTabs turns the tabs that indent the lines of text into spaces, four
// per tab. OPA indents a problem's detail (the source line, the caret
// under it) with a tab; spaces keep the caret under its column.
func expandTabs(text string) string {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		rest := strings.TrimLeft(line, "\t")
		lines[i] = strings.Repeat("    ", len(line)-len(rest)) + rest
	}
	return strings.Join(lines, "\n")
}
