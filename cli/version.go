package cli

import (
	"flag"
	"fmt"
	"io"
	"runtime"

	"github.com/trmaml/trmaml/graph"
)

// version is the release this source tree is; CHANGELOG.md's newest entry
// names the same one (TestVersionIsChangelogs).
const version = "0.1.0"

// versionCmd prints the release, the Go toolchain and the engine's build
// (CPU features, BLAS, kernel set), the facts a bug report needs.
func versionCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("version takes no arguments, got %q", fs.Args())
	}
	fmt.Fprintf(stdout, "trmaml %s (%s, %s/%s)\n%s\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH, graph.Engine())
	return nil
}
