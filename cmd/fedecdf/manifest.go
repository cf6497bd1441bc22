package main

import (
	"fmt"

	"github.com/fedecdf/fedecdf/deploy"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/server"
	"github.com/spf13/cobra"
)

func init() {
	m := deploy.Manifest{
		Version: deploy.ManifestVersion, Protocol: protocol.Version, Backend: string(server.DCF),
		Upload: deploy.UploadDirect, Payload: deploy.PayloadLayout(),
	}
	var out, leaderPub, helperPub string
	var analystPubs []string
	cmd := &cobra.Command{
		Use:   "manifest --out FILE --leader PUB --leader-addr MULTIADDR --helper PUB --helper-addr MULTIADDR --analyst PUB ...",
		Short: "Write the deployment manifest every server, party and analyst holds",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, e := range []struct {
				path string
				dst  *deploy.Endpoint
			}{{leaderPub, &m.Leader}, {helperPub, &m.Helper}} {
				p, err := deploy.ReadPublic(e.path)
				if err != nil {
					return err
				}
				e.dst.Public = p
			}
			for _, path := range analystPubs {
				p, err := deploy.ReadPublic(path)
				if err != nil {
					return err
				}
				m.Analysts = append(m.Analysts, p.PeerID)
			}
			if err := m.Write(out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "manifest %s: dataset %q, %d bins, %s ε=%g per release, total ε=%g, at least %d reports, %d analyst(s)\n",
				out, m.Dataset, m.Grid.Bins, m.Mechanism.Name, m.Mechanism.Epsilon, m.Budget.Epsilon, m.MinReports, len(m.Analysts))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "manifest.json", "manifest file to create (refuses to overwrite)")
	f.StringVar(&m.Dataset, "dataset", "fedecdf", "dataset name")
	f.StringVar(&leaderPub, "leader", "", "the leader's public key file (keygen's FILE.pub)")
	f.StringSliceVar(&m.Leader.Addrs, "leader-addr", nil, "the leader's multiaddr, e.g. /ip4/10.0.0.1/tcp/4001 (repeatable)")
	f.StringVar(&helperPub, "helper", "", "the helper's public key file")
	f.StringSliceVar(&m.Helper.Addrs, "helper-addr", nil, "the helper's multiaddr (repeatable)")
	f.StringSliceVar(&analystPubs, "analyst", nil, "an analyst's public key file (repeatable)")
	f.StringVar(&m.Grid.Scale, "scale", "linear", "grid scale: linear or log")
	f.Float64Var(&m.Grid.Min, "min", 0, "grid minimum")
	f.Float64Var(&m.Grid.Max, "max", 1, "grid maximum")
	f.IntVar(&m.Grid.Bins, "bins", 256, "number of bins N")
	f.StringVar(&m.Mechanism.Name, "mechanism", "auto", "noise mechanism: tree, kary, cascade, gaussian-tree or auto")
	f.Float64Var(&m.Mechanism.Epsilon, "epsilon", 1, "ε of each release (per payload component)")
	f.Float64Var(&m.Mechanism.Delta, "delta", 0, "δ of each release (approximate mechanisms)")
	f.IntVar(&m.Mechanism.K, "k", 0, "arity of the kary mechanism (0: best)")
	f.StringVar(&m.Mechanism.Relation, "relation", "replace-one", "neighbouring relation: replace-one or add-remove")
	f.Float64Var(&m.Budget.Epsilon, "budget-epsilon", 4, "total ε of all releases of the dataset")
	f.Float64Var(&m.Budget.Delta, "budget-delta", 0, "total δ of all releases of the dataset")
	f.IntVar(&m.MinReports, "min-reports", 100, "minimum number of reports before any release")
	f.StringVar(&m.Upload, "upload", deploy.UploadDirect, "how parties upload: direct (each server its key over Noise) or relay (through the leader, the helper's key HPKE-sealed to the helper)")
	rootCmd.AddCommand(cmd)
}
