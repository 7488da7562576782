package data

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/trmaml/trmaml/data/dataroot"
)

// EnvRoot is the environment variable that names the data root when neither
// a flag nor a config sets it.
const EnvRoot = dataroot.EnvRoot

// Root is a resolved data root and where it came from, for messages.
type Root = dataroot.Root

// ResolveRoot picks the data root: the -data (or -dir) flag value if not
// empty, else the config's value, else $TRMAML_DATA, else the per-user
// default DefaultRoot(). The root holds omniglot/.
func ResolveRoot(flag, config string) (Root, error) { return dataroot.Resolve(flag, config) }

// DefaultRoot is the per-user data root (dataroot.Default).
func DefaultRoot() (string, error) { return dataroot.Default() }

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
