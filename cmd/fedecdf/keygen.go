package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
)

// newKeygenCommand builds the "keygen" command.
func newKeygenCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "keygen --output FILE",
		Short: "Make a server's or analyst's identity: an Ed25519 libp2p key and an HPKE key pair (FILE, mode 0600; public part in FILE.pub)",
		Long: `keygen makes the identity of a server or an analyst: an Ed25519 key, whose
libp2p peer ID names it on the network, and an X25519 HPKE key pair, to
which parties seal what only it may read. The private keys go to --output
(mode 0600, never overwritten); the public part goes to FILE.pub, which
"fedecdf manifest" reads.`,
		Example: `  # The three identities of a deployment (each also writes FILE.pub)
  fedecdf keygen --output leader.key
  fedecdf keygen --output helper.key
  fedecdf keygen --output analyst.key`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fmt.Errorf("--output: no key file given")
			}
			id, err := manifest.NewIdentity()
			if err != nil {
				return err
			}
			if err := manifest.WriteIdentity(out, id); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "peer ID %s\nkey %s (0600), public part %s.pub\n", id.PeerID, out, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "output", "", "key file to create (refuses to overwrite)")
	addDeprecatedFlags(cmd)
	return cmd
}
