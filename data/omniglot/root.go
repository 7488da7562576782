package omniglot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// EnvRoot is the environment variable that names the data root when neither
// a flag nor a config sets it.
const EnvRoot = "TRMAML_DATA"

// Root is a resolved data root and where it came from, for messages.
type Root struct {
	Dir    string
	Source string // "flag", "config", EnvRoot or "default"
}

// ResolveRoot picks the data root: the -data (or -dir) flag value if not
// empty, else the config's value, else $TRMAML_DATA, else the per-user
// default DefaultRoot(). The root holds omniglot/.
func ResolveRoot(flag, config string) (Root, error) {
	switch {
	case flag != "":
		return Root{flag, "flag"}, nil
	case config != "":
		return Root{config, "config"}, nil
	case os.Getenv(EnvRoot) != "":
		return Root{os.Getenv(EnvRoot), EnvRoot}, nil
	}
	dir, err := DefaultRoot()
	if err != nil {
		return Root{}, err
	}
	return Root{dir, "default"}, nil
}

// Annotate adds where the root came from to an error about it, so that a
// user who did not choose the root learns how to choose another one.
func (r Root) Annotate(err error) error {
	if err == nil {
		return nil
	}
	switch r.Source {
	case "flag":
		return fmt.Errorf("%w (data root from the command line)", err)
	case "config":
		return fmt.Errorf("%w (data root from the config)", err)
	case EnvRoot:
		return fmt.Errorf("%w (data root from $%s)", err, EnvRoot)
	}
	return fmt.Errorf("%w (the default data root; set $%s or pass a data directory to use another)", err, EnvRoot)
}

// DefaultRoot is the per-user data root: os.UserCacheDir()/trmaml (on Linux
// $XDG_CACHE_HOME/trmaml or ~/.cache/trmaml, on macOS
// ~/Library/Caches/trmaml).
func DefaultRoot() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no data root: set %s or pass -data DIR (%v)", EnvRoot, err)
	}
	return filepath.Join(dir, "trmaml"), nil
}

// FetchCommand is the command that downloads the data into root.
func FetchCommand(root string) string {
	return "trmaml data omniglot -dir " + root
}

// ErrMissing marks a data root without Omniglot data.
var ErrMissing = errors.New("omniglot data missing")

// missingError says where the data was looked for and how to fetch it.
func missingError(root, detail string) error {
	return fmt.Errorf("%w in data root %s: %s; looked for %s and %s (or their extracted folders); fetch them with: %s",
		ErrMissing, root, detail,
		filepath.Join(root, Dir, sets[0].name+".zip"), filepath.Join(root, Dir, sets[1].name+".zip"),
		FetchCommand(root))
}

// dataError wraps a problem with the files of a data root.
func dataError(root string, err error) error {
	if errors.Is(err, errNoSource) {
		return missingError(root, err.Error())
	}
	return fmt.Errorf("omniglot data root %s: %w; check it with `%s -verify`, or move the files away and fetch them again with: %s",
		root, err, FetchCommand(root), FetchCommand(root))
}
