package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// statusFlags are the flags of fedecdf status.
type statusFlags struct {
	analystFlags
	timeout time.Duration
}

// newStatusCommand builds the "status" command.
func newStatusCommand() *cobra.Command {
	var o statusFlags
	cmd := &cobra.Command{
		Use:   "status --manifest FILE --key FILE [--format text|json]",
		Short: "Show how the two servers are: reports held by each and by both, ledgers, releases, last errors, reachability",
		Long: `status asks the leader, under an analyst's or an operator's key of the
manifest (fedecdf manifest --operator), how the deployment is; the leader compares its report set with the helper's (within
its --peer-timeout) and answers for both servers: their versions, the reports
each counts (verified and accepted), holds undecided (received, not yet
verified), rejected (per reason), known to both, and held by one server only
(an upload that reached one server; never in a release: see fedecdf server
--help), each ledger's
spent and total budget, the releases oldest first (ID, when the server created
it, mechanism, ε and δ charged), each
server's last warnings and errors, and whether the leader reaches the helper;
for a server run by several processes on one PostgreSQL database, each
process (coordinator or standby, upload address, uploads it acknowledged).
With --leader-process, a standby leader process's --query-listen address,
the standby answers from the database (the leader's ledger, releases,
reports and processes; not the helper, which only the coordinator asks).
Report counts and error lines are shown to an operator, and to an analyst
only under replace-one neighbours, where n is public; under add/remove they
are withheld from analysts. JSON keys: docs/json.md.`,
		Example: `  fedecdf status --manifest manifest.json --key analyst.key
  fedecdf status --manifest manifest.json --key operator.key --format json
  fedecdf status --manifest manifest.json --key analyst.key --leader-process /ip4/10.0.0.3/tcp/4101/p2p/12D3KooW...`,
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	f := cmd.Flags()
	o.add(f)
	f.DurationVar(&o.timeout, "timeout", time.Minute, "give up on the leader after this long")
	return cmd
}

func (o *statusFlags) run(cmd *cobra.Command, _ []string) error {
	if err := o.checkFormat(); err != nil {
		return err
	}
	if o.timeout <= 0 {
		return fmt.Errorf("--timeout %v: want a positive duration such as 1m", o.timeout)
	}
	m, id, tc, err := o.load(cmd, "analyst's or operator")
	if err != nil {
		return err
	}
	first, err := o.first()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	st, err := analyst.AskStatusAt(ctx, m, id, tc, first)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if o.format == "json" {
		return writeJSON(cmd.OutOrStdout(), st)
	}
	return writeStatus(cmd.OutOrStdout(), st)
}

// writeStatus prints a status as text: the deployment, then one block
// per server.
func writeStatus(out io.Writer, st *analyst.Status) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "dataset\t%s (protocol %d)\n", st.Dataset, st.Protocol)
	fmt.Fprintf(w, "leader → helper\t%s\n", yesNo(st.LeaderReachesHelper, "reachable", "UNREACHABLE"))
	switch {
	case !st.CountsPublic:
		fmt.Fprintf(w, "reports\twithheld: n is private under add/remove (an operator's key, the servers' logs and --metrics show the counts)\n")
	case st.ReportsBoth != nil:
		fmt.Fprintf(w, "held by both\t%d\n", *st.ReportsBoth)
	}
	for _, sv := range st.Servers {
		fmt.Fprintf(w, "\n%s\t%s\n", sv.Role, yesNo(sv.Reachable, sv.Version, "UNREACHABLE: "+sv.Error))
		if !sv.Reachable {
			continue
		}
		writeServerStatus(w, sv)
	}
	return w.Flush()
}

func writeServerStatus(w io.Writer, sv analyst.ServerStatus) {
	if sv.Reports != nil {
		fmt.Fprintf(w, "  reports counted\t%d\n", *sv.Reports)
		fmt.Fprintf(w, "  held, undecided\t%d\n", *sv.Held)
		fmt.Fprintf(w, "  held here only\t%d%s\n", *sv.OneServerOnly, optional(" (compared %s)", sv.ComparedAt))
	}
	if sv.Rejected != nil {
		fmt.Fprintf(w, "  rejected\t%s\n", verify.RejectedText(sv.Rejected))
	}
	fmt.Fprintf(w, "  budget spent\tε %g of %g, δ %g of %g\n", sv.Spent.Epsilon, sv.Total.Epsilon, sv.Spent.Delta, sv.Total.Delta)
	peer := map[string]string{"leader": "  helper checked", "helper": "  leader's last call"}[sv.Role]
	fmt.Fprintf(w, "%s\t%s\n", peer, yesNo(sv.PeerContact != "", sv.PeerContact, "never"))
	fmt.Fprintf(w, "  releases: %d\n", len(sv.Releases))
	for _, r := range sv.Releases {
		reports := ""
		if r.Reports != nil {
			reports = ", " + count(*r.Reports, "report")
		}
		fmt.Fprintf(w, "    %s  %s  %s %s, %s: ε %g, δ %g%s\n", r.Release, yesNo(r.Created != "", r.Created, "time unknown"), r.Mechanism, r.Neighbours, strings.Join(r.Components, "+"), r.Epsilon, r.Delta, reports)
	}
	if sv.Processes != nil {
		fmt.Fprintf(w, "  processes: %d\n", len(sv.Processes))
		for _, p := range sv.Processes {
			uploads := ""
			if p.Uploads != nil {
				uploads = fmt.Sprintf(", %d uploads", *p.Uploads)
			}
			fmt.Fprintf(w, "    %s  %s  upload %s%s, seen %s\n", p.ID, yesNo(p.Coordinator, "coordinator", "standby"), yesNo(p.UploadAddr != "", p.UploadAddr, "none"), uploads, p.Seen)
		}
	}
	if sv.LastErrors != nil {
		fmt.Fprintf(w, "  last errors: %d\n", len(sv.LastErrors))
		for _, e := range sv.LastErrors {
			fmt.Fprintf(w, "    %s\n", e)
		}
	}
}

func yesNo(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}

// optional formats s into format, or returns "" for an empty s.
func optional(format, s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf(format, s)
}
