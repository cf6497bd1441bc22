package main

import (
	"encoding/hex"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/store"
)

// newQuarantineCommand builds "server quarantine".
func newQuarantineCommand() *cobra.Command {
	var storePath, manifestPath string
	cmd := &cobra.Command{
		Use:   "quarantine --store FILE|postgres://… --manifest FILE REPORT_ID...",
		Short: "Set damaged reports aside in a stopped server's store (run it at both servers)",
		Long: `quarantine sets the named reports aside in the store of a stopped server:
their uploads and verdicts are deleted, whether their checksums hold or
not, and the store refuses them if uploaded again. It is the way out when
a server refuses to start because a stored report is damaged ("store
damaged: ... of report ID"): one bad record costs one report, not the
store. Run it with the same report IDs at both servers, so that both hold
the same report set again; the reports then leave every future release,
and a release created over one of them is refused rather than answered
over another set. A store whose file structure is damaged (not one
record) cannot be repaired this way: restore it from a backup. On a
PostgreSQL store (--store postgres://…, the password in PGPASSWORD or
~/.pgpass) stop every process of the server first.`,
		Example: `  # the server refused to start: "... the report record 17, of report 3f2a...: fails its checksum"
  fedecdf server quarantine --store leader.db --manifest manifest.json 3f2a0c...
  fedecdf server quarantine --store helper.db --manifest manifest.json 3f2a0c...`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if storePath == "" {
				return fmt.Errorf("--store is required")
			}
			m, err := manifest.ReadManifest(manifestPath)
			if err != nil {
				return err
			}
			ids := make([]payload.ReportID, len(args))
			for i, a := range args {
				if ids[i], err = parseReportID(a); err != nil {
					return err
				}
			}
			n, err := store.QuarantineBackend(storePath, "", m.Dataset, ids)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s of dataset %q quarantined in %s (%s deleted); run the same at the other server\n", count(len(ids), "report"), m.Dataset, storePath, count(n, "stored record"))
			return nil
		},
	}
	cmd.Flags().StringVar(&storePath, "store", "", "the stopped server's store: its bbolt file, or its postgres:// DSN")
	cmd.Flags().StringVar(&manifestPath, "manifest", "manifest.json", "deployment manifest (names the dataset)")
	return cmd
}

// parseReportID parses a report ID as the server's errors print it.
func parseReportID(s string) (payload.ReportID, error) {
	var id payload.ReportID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(id) {
		return id, fmt.Errorf("report ID %q is not %d hexadecimal bytes", s, len(id))
	}
	copy(id[:], b)
	return id, nil
}
