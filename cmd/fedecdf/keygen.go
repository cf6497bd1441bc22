package main

import (
	"fmt"

	"github.com/fedecdf/fedecdf/deploy"
	"github.com/spf13/cobra"
)

func init() {
	var out string
	cmd := &cobra.Command{
		Use:   "keygen --out FILE",
		Short: "Make a server's or analyst's identity: an Ed25519 libp2p key and an HPKE key pair (FILE, mode 0600; public part in FILE.pub)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fmt.Errorf("--out: no key file given")
			}
			id, err := deploy.NewIdentity()
			if err != nil {
				return err
			}
			if err := deploy.WriteIdentity(out, id); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "peer ID %s\nkey %s (0600), public part %s.pub\n", id.PeerID, out, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "key file to create (refuses to overwrite)")
	rootCmd.AddCommand(cmd)
}
