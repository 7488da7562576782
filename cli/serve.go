package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/trmaml/trmaml/serve"
)

// serveCmd serves the page of package serve over the given run
// directories until ctx is done (Ctrl-C).
func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "`HOST:PORT` to listen on (127.0.0.1: this machine only; port 0: any free port)")
	dirs, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return errors.New("serve: give one or more run directories or folders of runs")
	}
	s, err := serve.New(dirs)
	if err != nil {
		return err
	}
	runs, err := s.List()
	if err != nil {
		return err
	}
	l, err := serve.Listen(*addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "serving %d runs of %v at http://%s/ (read-only; Ctrl-C stops)\n", len(runs), dirs, l.Addr())
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return srv.Shutdown(shut)
	}
}
