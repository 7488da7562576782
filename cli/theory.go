package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/plots"
	"github.com/trmaml/trmaml/rundir"
	"github.com/trmaml/trmaml/theory"
)

// theoryCmd measures Theorem 1 (package theory) and writes
// theorem1_gap.png (-format, -width), theorem1_gap.csv and theorem1_gap.md
// into -out.
func theoryCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("theory", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "directory for theorem1_gap.png, .csv and .md")
	tmin := fs.Int("tmin", 100, "smallest number of iterations T")
	tmax := fs.Int("tmax", 100000, "largest number of iterations T")
	perDecade := fs.Int("per-decade", 3, "values of T per decade")
	seeds := fs.Int("seeds", 10, "seeds per T (1..N)")
	batch := fs.Int("batch", 2, "tasks per iteration C")
	var fig figureFlags
	fig.add(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := fig.check(); err != nil {
		return fmt.Errorf("theory: %w", err)
	}
	switch {
	case *out == "" || fs.NArg() > 0:
		return errors.New("theory: give -out DIR")
	case *tmin < 1 || *tmax < *tmin:
		return fmt.Errorf("theory: want 1 <= -tmin <= -tmax, got %d and %d", *tmin, *tmax)
	}
	// Bounds on what a study can take: beyond them it allocates past
	// memory (a panic) or runs for ever.
	for _, b := range []struct {
		name      string
		v, lo, hi int
	}{
		{"tmax", *tmax, 1, configs.MaxIterations},
		{"per-decade", *perDecade, 1, 100},
		{"seeds", *seeds, 2, 1000},
		{"batch", *batch, 1, configs.MaxBatch},
	} {
		if b.v < b.lo || b.v > b.hi {
			return fmt.Errorf("theory: -%s %d: must be in [%d, %d]", b.name, b.v, b.lo, b.hi)
		}
	}
	Ts := theory.LogGrid(*tmin, *tmax, *perDecade)
	if len(Ts) < 2 {
		return fmt.Errorf("theory: -tmin %d, -tmax %d and -per-decade %d give one T (%v); the fitted slope needs at least two", *tmin, *tmax, *perDecade, Ts)
	}
	if err := outNotRun("theory", *out); err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	lock, err := rundir.Open(*out) // locked, and cleaned of a killed write's temporary files
	if err != nil {
		return err
	}
	defer lock.Release()
	start := time.Now()
	rep, err := theory.Study(Ts, *perDecade, *seeds, *batch)
	if err != nil {
		return err
	}
	md := rep.Markdown(time.Since(start))
	png := fig.file(*out, "theorem1_gap")
	if err := plots.Theorem1Gap(rep.Curves, png, fig.width); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(*out, "theorem1_gap.csv"), []byte(rep.CSV())); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(*out, "theorem1_gap.md"), []byte(md)); err != nil {
		return err
	}
	fmt.Fprint(stdout, md)
	fmt.Fprintf(stdout, "wrote %s and theorem1_gap.csv, theorem1_gap.md\n", png)
	return nil
}
