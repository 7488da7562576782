package cli

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/trmaml/trmaml/plots"
)

// figureFlags are the -format and -width flags of the commands that
// draw figures.
type figureFlags struct {
	format string
	width  plots.Column
}

func (f *figureFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.format, "format", "png", "figure file `FORMAT`: "+strings.Join(plots.Formats, ", "))
	fs.Func("width", "lay figures out for `WIDTH`: double (a page's text width, 7 in; the default) or single (one column of two, 3.4 in)", func(v string) error {
		var err error
		f.width, err = plots.ParseColumn(v)
		return err
	})
}

func (f *figureFlags) check() error {
	if !slices.Contains(plots.Formats, f.format) {
		return fmt.Errorf("-format %q: want one of %s", f.format, strings.Join(plots.Formats, ", "))
	}
	return nil
}

// file is the path of figure name in out, in the chosen format.
func (f *figureFlags) file(out, name string) string { return filepath.Join(out, name+"."+f.format) }

// plotCmd is "trmaml plot [-runs DIR]... -out DIR [DIR...]": the report
// figures of the finished runs in the directories (default runs), written to
// -out: figure1.png (Figure 1 at the first setting, second order when there
// is one; figure1_kN.png or figure1_NwayKshot.png for every other setting),
// for MSE runs p_weights.png (if there is a TR-MAML run), for accuracy runs
// adversary.png per setting (training distribution, final p and per-task
// accuracy by task name), and orders.png (if some setting has runs of both
// orders). With runs of several metrics each file name starts with the
// metric's name (mse_figure1.png, accuracy_figure1.png, ...).
func plotCmd(args []string, stdout, stderr io.Writer) error {
	var fig figureFlags
	groups, out, release, err := groupsAndOut("plot", "directory for the figures (required)", args, stderr, &fig, true, nil)
	if err != nil {
		return err
	}
	defer release()
	return plots.WriteReport(groups, out, fig.format, fig.width, stdout)
}
