package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/xsim"
)

func (c *cli) xsimCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "xsim", Short: "Run the built-in X API v2 emulator"}
	var listen, state string
	var seed int64
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Serve the emulator alone on loopback, for other clients",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := loopbackListen(listen, "the emulator"); err != nil {
				return err
			}
			opts := xsim.DefaultOptions()
			opts.Seed = seed
			// The world is saved after every change, not only on exit.
			opts.StateFile = state
			if state != "" {
				w, err := xsim.LoadWorld(state)
				if err == nil {
					opts.World = w
				} else if !isNotExist(err) {
					return err
				}
			}
			srv := xsim.New(opts)
			url, err := srv.Start(cmd.Context(), listen)
			if err != nil {
				return err
			}
			access, _, _ := srv.IssueToken(srv.DemoUserID(), srv.AllScopes())
			fmt.Fprintf(c.stdout, "X emulator listening on %s\ndemo user: %s\nclient_id: %s\n", url, srv.DemoUserID(), xsim.DefaultClientID)
			fmt.Fprintf(c.stderr, "a demo bearer token for curl (emulator only): %s\n", access)
			<-cmd.Context().Done()
			return srv.Close()
		},
	}
	serve.Flags().StringVar(&listen, "listen", "127.0.0.1:8766", "host:port (loopback)")
	serve.Flags().StringVar(&state, "state", "", "load the emulator world from this file and save it there after every change")
	serve.Flags().Int64Var(&seed, "seed", 1, "seed of the generated demo world")
	cmd.AddCommand(serve)
	return cmd
}
