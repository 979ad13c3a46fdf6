package tool

import (
	"flag"

	"github.com/urfave/cli/v2"
)

// helpFlag is urfave/cli's --help flag made safe for apps that parse flags
// at the same time. urfave/cli v2 appends one package-level *BoolFlag to
// every app and command, and BoolFlag.Apply writes into it (it records the
// default value) each time a flag set is built, so two concurrent Runs
// race on it. Apply here works on a copy; everything else (names, usage,
// help output) comes from the embedded flag unchanged.
type helpFlag struct{ cli.BoolFlag }

// Apply registers the flag on set from a private copy.
func (h *helpFlag) Apply(set *flag.FlagSet) error {
	c := h.BoolFlag
	return c.Apply(set)
}

// The replacement happens once, before any app exists; cli.HelpFlag is not
// written again.
func init() {
	if b, ok := cli.HelpFlag.(*cli.BoolFlag); ok {
		cli.HelpFlag = &helpFlag{BoolFlag: *b}
	}
}
