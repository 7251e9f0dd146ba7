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

// layoutFor is the layout c's output is cut into rows for: the
// terminal's width, or --width (see render.ForTerminal). A --width
// narrower than render.MinWidth is a usage error.
func layoutFor(c *cobra.Command) (render.Layout, error) {
	asked, err := c.Flags().GetInt("width")
	if err != nil {
		return render.Layout{}, err
	}
	if c.Flags().Changed("width") && asked < render.MinWidth {
		return render.Layout{}, usageError{fmt.Errorf("--width %d is narrower than %d columns\nTry: --width 80", asked, render.MinWidth)}
	}
	return render.ForTerminal(asked), nil
}
