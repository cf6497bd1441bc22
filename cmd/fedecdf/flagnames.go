package main

import (
	"sort"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// One spelling per concept across the commands:
//
//	--input FILE            the file of records read (ecdf, simulate, party)
//	--score-column NAME     the score column of --input (simulate, party)
//	--label-column NAME     the label column of --input (simulate, party)
//	--out DIR               a directory the results go to (simulate, query, experiment)
//	--output FILE           the one file made (keygen, manifest)
//	--score-value X …       a single record's values (party)
//
// deprecatedFlags are the older spellings, by command name: old name →
// current name. Each stays accepted, sharing the current flag's value,
// hidden from the help and with a deprecation notice on standard error.
var deprecatedFlags = map[string]map[string]string{
	"party":    {"csv": "input", "score": "score-value", "label": "label-value", "probability": "probability-value"},
	"simulate": {"data": "input", "score": "score-column", "label": "label-column"},
	"keygen":   {"out": "output"},
	"manifest": {"out": "output"},
	"trees":    {"data": "input"}, // bench trees
}

// addDeprecatedFlags gives cmd the deprecated spellings of its flags
// (deprecatedFlags); every constructor with renamed flags calls it last.
func addDeprecatedFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	olds := make([]string, 0, len(deprecatedFlags[cmd.Name()]))
	for old := range deprecatedFlags[cmd.Name()] {
		olds = append(olds, old)
	}
	sort.Strings(olds)
	for _, old := range olds {
		name := deprecatedFlags[cmd.Name()][old]
		cur := f.Lookup(name)
		f.AddFlag(&pflag.Flag{Name: old, Usage: "deprecated spelling of --" + name, Value: cur.Value, DefValue: cur.DefValue})
		_ = f.MarkDeprecated(old, "use --"+name)
	}
}

// flagChanged says whether the flag name of cmd, or one of its
// deprecated spellings, was given.
func flagChanged(cmd *cobra.Command, name string) bool {
	if cmd.Flags().Changed(name) {
		return true
	}
	for old, cur := range deprecatedFlags[cmd.Name()] {
		if cur == name && cmd.Flags().Changed(old) {
			return true
		}
	}
	return false
}
