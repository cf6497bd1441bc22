package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/server"
)

// manifestOptions are the flags of "fedecdf manifest": the manifest's
// fields, and the files its keys and its destination come from.
type manifestOptions struct {
	m                            manifest.Manifest
	out, leaderPub, helperPub    string
	analystPubs, operatorPubs    []string
	leaderUploads, helperUploads []string
}

// newManifestCommand returns the "manifest" command.
func newManifestCommand() *cobra.Command {
	o := manifestOptions{m: manifest.Manifest{
		Version: manifest.ManifestVersion, Protocol: protocol.Version, Backend: string(server.DCF),
		Upload: manifest.UploadDirect, Payload: manifest.PayloadLayout(),
	}}
	cmd := &cobra.Command{
		Use:   "manifest --output FILE --leader PUB --leader-addr MULTIADDR --helper PUB --helper-addr MULTIADDR --analyst PUB ...",
		Short: "Write the deployment manifest every server, party and analyst holds",
		Long: `Write the deployment manifest every server, party and analyst holds.

The manifest pins the dataset's privacy policy, which both servers
enforce on every release whoever asks: the neighbouring relation every
release is private under and charged in (--neighbours), the mechanisms a
release may use (--allow), the largest δ and ε of one release
(--max-delta, --max-epsilon) and the total budget (--budget-epsilon,
--budget-delta). --mechanism, --epsilon, --delta and --k are the release
the analyst commands ask for; it must fit the policy.

--leader-upload and --helper-upload give the servers' sealed-upload
addresses: a party then uploads to such a server over one plain TCP
connection per report, its upload HPKE-sealed to the server's key and
the acknowledgement authenticated, instead of a libp2p connection and
handshake (much cheaper for the servers). Without them parties upload
over libp2p. A server run by several processes on one PostgreSQL
database lists each process's address (repeat the flag, or separate
them by commas): parties spread their uploads over them and retry
another when one fails.`,
		Example: `  # After fedecdf keygen --output leader.key (and helper.key, analyst.key):
  # both servers on this machine, as in fedecdf server --help
  fedecdf manifest --output manifest.json --dataset scores --bins 128 \
    --leader leader.key.pub --leader-addr /ip4/127.0.0.1/tcp/4001 \
    --helper helper.key.pub --helper-addr /ip4/127.0.0.1/tcp/4002 \
    --analyst analyst.key.pub --epsilon 1 --budget-epsilon 4 --min-reports 100

  # The same, parties uploading over the sealed transport
  fedecdf manifest --output sealed.json --dataset scores --bins 128 \
    --leader leader.key.pub --leader-addr /ip4/127.0.0.1/tcp/4001 --leader-upload 127.0.0.1:7401 \
    --helper helper.key.pub --helper-addr /ip4/127.0.0.1/tcp/4002 --helper-upload 127.0.0.1:7402 \
    --analyst analyst.key.pub --epsilon 1 --budget-epsilon 4 --min-reports 100

  # Two processes per server (fedecdf server --store postgres://…)
  fedecdf manifest --output processes.json --dataset scores --bins 128 \
    --leader leader.key.pub --leader-addr /ip4/10.0.0.1/tcp/4001,/ip4/10.0.0.3/tcp/4001 --leader-upload 10.0.0.1:7401,10.0.0.3:7401 \
    --helper helper.key.pub --helper-addr /ip4/10.0.0.2/tcp/4001,/ip4/10.0.0.4/tcp/4001 --helper-upload 10.0.0.2:7401,10.0.0.4:7401 \
    --analyst analyst.key.pub --epsilon 1 --budget-epsilon 4 --min-reports 100`,
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	o.addFlags(cmd)
	addDeprecatedFlags(cmd)
	return cmd
}

// run completes the manifest from the key files and writes it.
func (o *manifestOptions) run(cmd *cobra.Command, _ []string) error {
	m, out := &o.m, o.out
	if err := checkBins(m.Grid.Bins); err != nil {
		return err
	}
	if cmd.Flags().Changed("k") && m.Mechanism.Name != "kary" && m.Mechanism.Name != "auto" {
		return fmt.Errorf("--k %d is the arity of the kary mechanism, but --mechanism is %s: drop --k or use --mechanism kary", m.Mechanism.K, m.Mechanism.Name)
	}
	// The policy allows, unless told otherwise, exactly the
	// release the analyst commands ask for, and with auto the ROC
	// release's default (analysis.ROCParams).
	if !cmd.Flags().Changed("allow") {
		m.Mechanism.Allowed = defaultAllowed(m.Mechanism)
	}
	if !cmd.Flags().Changed("max-delta") {
		m.Mechanism.MaxDelta = m.Mechanism.Delta
	}
	for _, e := range []struct {
		flag, path string
		dst        *manifest.Endpoint
		uploads    []string
	}{{"leader", o.leaderPub, &m.Leader, o.leaderUploads}, {"helper", o.helperPub, &m.Helper, o.helperUploads}} {
		if e.path == "" {
			return fmt.Errorf("--%s is required: the %s's public key file (fedecdf keygen writes FILE.pub)", e.flag, e.flag)
		}
		if len(e.dst.Addrs) == 0 {
			return fmt.Errorf("--%s-addr is required: the multiaddr the %s listens on, e.g. /ip4/10.0.0.1/tcp/4001", e.flag, e.flag)
		}
		p, err := manifest.ReadPublic(e.path)
		if err != nil {
			return fmt.Errorf("--%s: %w", e.flag, err)
		}
		e.dst.Public = p
		if len(e.uploads) > 0 {
			e.dst.UploadAddr, e.dst.MoreUploadAddrs = e.uploads[0], e.uploads[1:]
		}
	}
	if len(o.analystPubs) == 0 {
		return errors.New("--analyst is required: without an analyst nobody could create a release; give an analyst's public key file (fedecdf keygen writes FILE.pub)")
	}
	for _, keys := range []struct {
		flag  string
		paths []string
		ids   *[]string
	}{{"analyst", o.analystPubs, &m.Analysts}, {"operator", o.operatorPubs, &m.Operators}} {
		for _, path := range keys.paths {
			p, err := manifest.ReadPublic(path)
			if err != nil {
				return fmt.Errorf("--%s: %w", keys.flag, err)
			}
			*keys.ids = append(*keys.ids, p.PeerID)
		}
	}
	if err := m.Write(out); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "manifest %s: dataset %q, %d bins, %s ε=%.6g δ=%.6g per release under %s neighbours (servers allow %s, δ ≤ %g), total ε=%.6g δ=%.6g, at least %d reports, %d analyst(s)\n",
		out, m.Dataset, m.Grid.Bins, m.Mechanism.Name, m.Mechanism.Epsilon, m.Mechanism.Delta, m.Mechanism.Neighbours,
		strings.Join(m.Mechanism.Allowed, ", "), m.Mechanism.MaxDelta, m.Budget.Epsilon, m.Budget.Delta, m.MinReports, len(m.Analysts))
	return nil
}

// addFlags binds the flags of cmd to o.
func (o *manifestOptions) addFlags(cmd *cobra.Command) {
	m := &o.m
	f := cmd.Flags()
	f.StringVar(&o.out, "output", "manifest.json", "manifest file to create (refuses to overwrite)")
	f.StringVar(&m.Dataset, "dataset", "fedecdf", "dataset name")
	f.StringVar(&o.leaderPub, "leader", "", "the leader's public key file (keygen's FILE.pub)")
	f.StringSliceVar(&m.Leader.Addrs, "leader-addr", nil, "the leader's multiaddr, e.g. /ip4/10.0.0.1/tcp/4001 (repeatable)")
	f.StringSliceVar(&o.leaderUploads, "leader-upload", nil, "the leader's sealed-upload address HOST:PORT, e.g. 10.0.0.1:7401: parties upload there over one TCP connection per report, HPKE-sealed to the leader (repeatable: one per process of a leader on PostgreSQL; default: none, parties use libp2p)")
	f.StringVar(&o.helperPub, "helper", "", "the helper's public key file")
	f.StringSliceVar(&m.Helper.Addrs, "helper-addr", nil, "the helper's multiaddr (repeatable)")
	f.StringSliceVar(&o.helperUploads, "helper-upload", nil, "the helper's sealed-upload address HOST:PORT (as --leader-upload, repeatable; not used by parties in relay mode)")
	f.StringSliceVar(&o.analystPubs, "analyst", nil, "an analyst's public key file (repeatable)")
	f.StringSliceVar(&o.operatorPubs, "operator", nil, "an operator's public key file (repeatable): fedecdf status only, with the report counts it withholds from analysts under addremove")
	f.StringVar(&m.Grid.Scale, "scale", "linear", "grid scale: linear or log")
	f.Float64Var(&m.Grid.Min, "min", 0, "grid minimum")
	f.Float64Var(&m.Grid.Max, "max", 1, "grid maximum")
	f.IntVar(&m.Grid.Bins, "bins", commonBins, binsUsage("suits thousands of parties, as in simulate: the servers' work grows as n·N"))
	f.StringVar(&m.Mechanism.Name, "mechanism", "auto", "noise mechanism of the analysts' releases: "+strings.Join(mechanism.Names, ", ")+" (with auto, query roc uses partitioned where the policy allows it and it has less noise at the grid's ends)")
	f.Float64Var(&m.Mechanism.Epsilon, "epsilon", 1, "ε of each release (per payload component)")
	f.Float64Var(&m.Mechanism.Delta, "delta", 0, "δ of each release (approximate mechanisms)")
	f.IntVar(&m.Mechanism.K, "k", 0, "arity of the kary mechanism (0: best)")
	f.StringVar(&m.Mechanism.Neighbours, "neighbours", "replace", "neighbouring relation every release is private under and charged in: replace (n public) or addremove")
	f.StringSliceVar(&m.Mechanism.Allowed, "allow", nil, "mechanisms the servers accept in a release (repeatable; default: --mechanism, and partitioned too with auto and δ = 0)")
	f.Float64Var(&m.Mechanism.MaxDelta, "max-delta", 0, "largest δ per release the servers accept; 0 allows pure ε-DP releases only (default: --delta)")
	f.Float64Var(&m.Mechanism.MaxEpsilon, "max-epsilon", 0, "largest ε per release the servers accept (0: bounded by the budget alone)")
	f.Float64Var(&m.Budget.Epsilon, "budget-epsilon", 4, "total ε of all releases of the dataset")
	f.Float64Var(&m.Budget.Delta, "budget-delta", 0, "total δ of all releases of the dataset")
	f.IntVar(&m.MinReports, "min-reports", 100, "minimum number of reports before any release")
	f.StringVar(&m.Backend, "backend", string(server.DCF), "secure-sum backend: dcf (verified DCF keys, the probability included) or additive (Prio3-verified one-hot histograms; no probability component): both reject invalid reports at both servers")
	f.StringVar(&m.Upload, "upload", manifest.UploadDirect, "how parties upload: direct (each server its key over Noise) or relay (through the leader, the helper's key HPKE-sealed to the helper)")
}

// defaultAllowed is the policy's mechanisms when --allow is not given:
// the analysts' mechanism, and with "auto" at δ = 0 also the ROC
// release's default (analysis.ROCMechanism), which query roc asks for
// in its place.
func defaultAllowed(m manifest.Mech) []string {
	if m.Name == "auto" && m.Delta == 0 {
		return []string{m.Name, analysis.ROCMechanism}
	}
	return []string{m.Name}
}
