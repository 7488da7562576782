package data

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
)

const dataUsage = `usage: trmaml data omniglot [-dir DIR] [-verify] [-info] [-url URL]
Downloads the Omniglot archives into DIR/omniglot (resuming an interrupted download and verifying
the content before moving them into place); -verify checks an existing data root, -info lists the
alphabets with their character counts and split. DIR defaults to $TRMAML_DATA, else the per-user
cache directory (%s).
`

// DataCommand implements configs.DataCommander: it runs "trmaml data
// omniglot" with the arguments after its name.
func (side) DataCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	def, _ := DefaultRoot()
	fs := flag.NewFlagSet("data omniglot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintf(stderr, dataUsage, def); fs.PrintDefaults() }
	dir := fs.String("dir", "", "data root that holds omniglot/ (default: $"+EnvRoot+", else "+def+")")
	verify := fs.Bool("verify", false, "check the data root's archives (counts and content SHA-256) instead of downloading")
	info := fs.Bool("info", false, "print every alphabet's character count and split instead of downloading")
	url := fs.String("url", CanonicalBaseURL, "base URL of images_background.zip and images_evaluation.zip")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("data omniglot: unexpected arguments %v", fs.Args())
	}
	// A flag the chosen action ignores is refused, not dropped.
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch {
	case *info && *verify:
		return errors.New("data omniglot: give at most one of -info and -verify")
	case given["url"] && (*info || *verify):
		return errors.New("data omniglot: -url goes with downloading, not with -info or -verify")
	case given["dir"] && *dir == "":
		return errors.New("data omniglot: -dir is empty: give a data root, or leave -dir out for the default")
	}
	root, err := ResolveRoot(*dir, "")
	if err != nil {
		return err
	}
	switch {
	case *info:
		return root.Annotate(printInfo(stdout, root.Dir))
	case *verify:
		if err := Verify(root.Dir); err != nil {
			return root.Annotate(err)
		}
		fmt.Fprintf(stdout, "%s: Omniglot verified (964 + 659 characters, 19,280 + 13,180 images, content SHA-256 %s)\n",
			root.Dir, ContentSHA256)
		return nil
	}
	fmt.Fprintf(stdout, "downloading Omniglot from %s into %s (data root from %s)\n", *url, root.Dir, root.Source)
	return root.Annotate(Download(ctx, root.Dir, DownloadOptions{BaseURL: *url, Progress: stderr}))
}

// printInfo lists the alphabets by split with their counts.
func printInfo(w io.Writer, root string) error {
	alphabets, err := List(root)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "split\talphabet\tcharacters\timages\t\n")
	for _, s := range Splits {
		n, chars, images := 0, 0, 0
		for _, a := range alphabets {
			if a.Split == s {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t\n", s, a.Name, a.Characters, a.Images)
				n, chars, images = n+1, chars+a.Characters, images+a.Images
			}
		}
		fmt.Fprintf(tw, "%s total\t%d alphabets\t%d\t%d\t\n", s, n, chars, images)
	}
	return tw.Flush()
}
