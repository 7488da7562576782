package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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
	case *perDecade < 1 || *seeds < 2 || *batch < 1:
		return errors.New("theory: -per-decade and -batch must be >= 1, -seeds >= 2")
	}
	Ts := theory.LogGrid(*tmin, *tmax, *perDecade)
	if len(Ts) < 2 {
		return fmt.Errorf("theory: -tmin %d, -tmax %d and -per-decade %d give one T (%v); the fitted slope needs at least two", *tmin, *tmax, *perDecade, Ts)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	lock, err := rundir.Open(*out) // locked, and cleaned of a killed write's temporary files
	if err != nil {
		return err
	}
	defer lock.Release()
	f, R := theory.DefaultFamily(), theory.DefaultRadius
	start := time.Now()
	s, err := f.Saddle(R)
	if err != nil {
		return err
	}
	c := f.TheoremConstants(R, *batch)
	var md, csv strings.Builder
	fmt.Fprintf(&md, "Saddle point (dual ascent + KKT Newton): w* = %.12g, p* = %.12g, min-max value %.15g; "+
		"certified duality gap %.2g, complementary slackness %.2g.\n\n", s.W, s.P, s.Value, s.Gap, s.Slackness)
	fmt.Fprintf(&md, "Theorem 1's constants on the ball of radius R = %g with C = %d: B = %.4g, L = %.4g, H = 0, G_p = %.4g; "+
		"eta_w = %.4g / sqrt(T), eta_p = %.4g / sqrt(T) (entropic: %.4g / sqrt(T)).\n\n",
		R, *batch, c.B, c.L, c.Gp, c.StepW(f.Alpha, 1), c.StepP(1), c.StepPEntropic(1))
	ids := make([]uint64, *seeds)
	for i := range ids {
		ids[i] = uint64(i + 1)
	}
	csv.WriteString("geometry,T,mean_gap,ci95_half,theorem_bound,gaps\n")
	var curves []theory.Curve
	md.WriteString("| ascent on p | fitted slope (all T) | local slope over the last decade | mean gap at largest T |\n|---|---:|---:|---:|\n")
	for _, g := range []theory.Geometry{theory.Euclidean, theory.Entropic} {
		cv, err := f.Measure(g, R, *batch, Ts, ids)
		if err != nil {
			return err
		}
		curves = append(curves, cv)
		last := len(Ts) - 1
		decade := max(0, last-*perDecade)
		lastSlope := 0.0
		if last > decade {
			lastSlope = (logRatio(cv.Mean[last], cv.Mean[decade])) / logRatio(float64(Ts[last]), float64(Ts[decade]))
		}
		fmt.Fprintf(&md, "| %s | %.3f | %.3f | %.3g ± %.2g |\n", g, cv.Slope, lastSlope, cv.Mean[last], cv.Half[last])
		for k, T := range Ts {
			fmt.Fprintf(&csv, "%s,%d,%g,%g,%g,%s\n", g, T, cv.Mean[k], cv.Half[k], c.Bound(f.Alpha, T), joinFloats(cv.Gaps[k]))
		}
	}
	fmt.Fprintf(&md, "\n%d seeds per T, T = %v; %s wall clock.\n", *seeds, Ts, time.Since(start).Round(time.Second))
	png := fig.file(*out, "theorem1_gap")
	if err := plots.Theorem1Gap(curves, png, fig.width); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(*out, "theorem1_gap.csv"), []byte(csv.String())); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(*out, "theorem1_gap.md"), []byte(md.String())); err != nil {
		return err
	}
	fmt.Fprint(stdout, md.String())
	fmt.Fprintf(stdout, "wrote %s and theorem1_gap.csv, theorem1_gap.md\n", png)
	return nil
}

func logRatio(a, b float64) float64 { return math.Log(a / b) }

func joinFloats(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'g', 8, 64)
	}
	return strings.Join(parts, ";")
}
