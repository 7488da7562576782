// Package dataroot finds the data root, the folder under which the task
// families that read files find their data (omniglot/, a user's image
// folders): the -data (or -dir) flag, else the config's data.root, else
// $TRMAML_DATA, else the per-user cache folder. It links nothing else, so
// that configs and reports can resolve paths without the loaders.
package dataroot

import (
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

// Resolve picks the data root: the flag value if not empty, else the
// config's value, else $TRMAML_DATA, else Default().
func Resolve(flag, config string) (Root, error) {
	switch {
	case flag != "":
		return Root{flag, "flag"}, nil
	case config != "":
		return Root{config, "config"}, nil
	case os.Getenv(EnvRoot) != "":
		return Root{os.Getenv(EnvRoot), EnvRoot}, nil
	}
	dir, err := Default()
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

// Default is the per-user data root: os.UserCacheDir()/trmaml (on Linux
// $XDG_CACHE_HOME/trmaml or ~/.cache/trmaml, on macOS
// ~/Library/Caches/trmaml).
func Default() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no data root: set %s or pass -data DIR (%v)", EnvRoot, err)
	}
	return filepath.Join(dir, "trmaml"), nil
}
