// Command fedecdf computes differentially private ECDFs, quantiles,
// ROC/PR curves and Hosmer–Lemeshow.
//
// It runs either on one machine or across many parties and two
// non-colluding servers.
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/fedecdf/fedecdf/simulate"
	"github.com/spf13/cobra"
)

func main() {
	root := newRootCommand()
	if err := root.Execute(); err != nil {
		fmt.Fprintln(root.ErrOrStderr(), "fedecdf:", describe(err))
		os.Exit(1)
	}
}

// binsUsage is the help of every command's --bins: one story, and why
// this command's default is what it is.
func binsUsage(why string) string {
	return "number of bins N of the public grid, fixed before seeing data: more bins resolve finer, but each prefix sums about log N noisy tree nodes; the default " + why
}

// binsUsageUnlike is binsUsage for a command whose default --bins is not
// commonBins, saying why.
func binsUsageUnlike(why string) string {
	return binsUsage(fmt.Sprintf("differs: unlike the %d of simulate and manifest, it %s", commonBins, why))
}

// commonBins is the default --bins of simulate and manifest, and of every
// command without a reason of its own for another (binsUsageUnlike).
var commonBins = simulate.DefaultConfig().Bins

// newRootCommand builds the fedecdf command and its subcommands, each
// with flags of its own, so tests can run any of them in-process.
func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "fedecdf",
		Short: "Federated, differentially private ECDFs, quantiles, ROC/PR curves and Hosmer–Lemeshow",
		Long: `fedecdf lets many parties, each holding one private record, compute together
with differential privacy a complete empirical CDF, its inverse (quantiles),
ROC and PR curves and the Hosmer–Lemeshow calibration statistic, through two
non-colluding servers that never see a record.`,
		Example: `  fedecdf demo
  fedecdf ecdf --help
  fedecdf --version`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newECDFCommand(),
		newHistogramCommand(),
		newSimulateCommand(),
		newExperimentCommand(),
		newAuditCommand(),
		newBenchCommand(),
		newKeygenCommand(),
		newManifestCommand(),
		newServerCommand(),
		newPartyCommand(),
		newQueryCommand(),
		newStatusCommand(),
		newDemoCommand(),
		newUICommand(),
	)
	root.SetVersionTemplate("fedecdf {{.Version}}\n")
	for _, c := range append(commands(root), root) {
		if c.HasSubCommands() && !c.Runnable() {
			requireSubcommand(c)
		}
	}
	return root
}

// requireSubcommand makes the group command c print its help when run
// alone and refuse an unknown subcommand with an error (cobra would
// print the help and succeed).
func requireSubcommand(c *cobra.Command) {
	c.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return fmt.Errorf("unknown command %q for %q: run '%s --help' for the commands", args[0], c.CommandPath(), c.CommandPath())
		}
		return nil
	}
	c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
}

// commands returns every command under c, depth first, c excluded.
func commands(c *cobra.Command) []*cobra.Command {
	var all []*cobra.Command
	for _, sub := range c.Commands() {
		all = append(all, sub)
		all = append(all, commands(sub)...)
	}
	return all
}

// version is the module version and the VCS revision the binary was
// built from, as far as the build recorded them.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(no build information)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev != "" {
		v += " (revision " + rev + modified + ")"
	}
	return v + ", " + info.GoVersion
}
