package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
)

// addWidthFlag gives a command that prints for a person --width, the
// width in columns its rows are cut at (see layoutFor).
func addWidthFlag(c *cobra.Command) {
	c.Flags().Int("width", 0, fmt.Sprintf("cut rows at this many columns (default: the terminal's width, else %d)", render.DefaultWidth))
}

// addTableWidthFlag is addWidthFlag for a table (see tableLayoutFor).
func addTableWidthFlag(c *cobra.Command) {
	c.Flags().Int("width", 0, "cut rows at this many columns (default: the terminal's width; with no terminal, rows are whole)")
}

// layoutFor is the layout c's output is cut into rows for: the
// terminal's width, or --width (see render.ForTerminal). A --width
// narrower than render.MinWidth is a usage error.
func layoutFor(c *cobra.Command) (render.Layout, error) {
	asked, err := askedWidth(c)
	return render.ForTerminal(asked), err
}

// tableLayoutFor is layoutFor for a table, which is not cut when no
// terminal shows it and no --width was asked (see render.ForTable).
func tableLayoutFor(c *cobra.Command) (render.Layout, error) {
	asked, err := askedWidth(c)
	return render.ForTable(asked), err
}

// askedWidth is --width, 0 when not given.
func askedWidth(c *cobra.Command) (int, error) {
	asked, err := c.Flags().GetInt("width")
	if err != nil {
		return 0, err
	}
	if c.Flags().Changed("width") && asked < render.MinWidth {
		return 0, usageError{fmt.Errorf("--width %d is narrower than %d columns\nTry: --width 80", asked, render.MinWidth)}
	}
	return asked, nil
}
