package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trmaml/trmaml/internal/shell"

	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/internal/dirlock"
)

// ErrExists is returned when the output directory already holds files: a
// run directory is never overwritten.
var ErrExists = errors.New("run directory already exists and is not empty")

// Create makes dir and takes its lock, refusing a directory with content
// other than the lock and interrupted writes' temporary files (which it
// removes).
func Create(dir string) (*dirlock.Lock, error) {
	// A directory another process is writing is reported as that, before
	// any advice about its content (which would be to resume it).
	// Acquire names the holder (waiting for one that just started).
	if _, held, err := dirlock.Holder(dir); err == nil && held {
		lock, err := dirlock.Acquire(dir)
		if err != nil {
			return nil, err
		}
		lock.Release()
	}
	if err := refuseContent(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lock, err := Open(dir)
	if err != nil {
		return nil, err
	}
	// Again under the lock: another process may have started meanwhile.
	if err := refuseContent(dir); err != nil {
		lock.Release()
		return nil, err
	}
	return lock, nil
}

// refuseContent refuses a directory holding anything but a lock file and
// temporary files; a missing directory is fine.
func refuseContent(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == LockFile || atomicfile.IsTemp(e.Name()) {
			continue
		}
		if fileExists(filepath.Join(dir, ConfigFile)) && !fileExists(filepath.Join(dir, ResultFile)) {
			return fmt.Errorf("%s: %w: it holds an unfinished run (continue it with trmaml resume -run %s)", dir, ErrExists, shell.Quote(dir))
		}
		return fmt.Errorf("%s: %w (choose a new -out, or remove it yourself)", dir, ErrExists)
	}
	return nil
}

// Open takes the lock of the existing directory dir, so that no other
// process writes it meanwhile, and removes the temporary files of writes a
// crash interrupted: for output directories. A command that may refuse a
// run directory takes LockRun and cleans it (CleanTemps) only once it accepts
// it, so that a refused call changes nothing.
func Open(dir string) (*dirlock.Lock, error) {
	lock, err := Lock(dir)
	if err != nil {
		return nil, err
	}
	if err := CleanTemps(dir); err != nil {
		lock.Release()
		return nil, err
	}
	return lock, nil
}

// Lock takes the lock of the existing directory dir, writing nothing else.
func Lock(dir string) (*dirlock.Lock, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	return dirlock.Acquire(dir)
}

// LockRun takes the lock of the run directory dir, refusing first,
// without creating the lock file, a dir that is not a directory or holds
// no config.yaml: a command given the wrong directory leaves it as it was.
func LockRun(dir string) (*dirlock.Lock, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	if !fileExists(filepath.Join(dir, ConfigFile)) && !fileExists(filepath.Join(dir, ManifestFile)) {
		return nil, fmt.Errorf("%s has no %s: not a run directory (or one killed before its config was written: start it again with train)", dir, ConfigFile)
	}
	return dirlock.Acquire(dir)
}

// CleanTemps removes the temporary files of writes into dir a crash
// interrupted; the caller holds dir's lock.
func CleanTemps(dir string) error {
	_, err := atomicfile.CleanTemps(dir)
	return err
}

// RunFileIn returns the file that makes dir a run directory (its config,
// manifest, checkpoint or result), or "" if it holds none of them: for
// commands that write their own files into a directory and must not mix
// them with a run's, which its manifest would not list.
func RunFileIn(dir string) string {
	for _, f := range []string{ConfigFile, ManifestFile, CheckpointFile, ResultFile} {
		if fileExists(filepath.Join(dir, f)) {
			return f
		}
	}
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// Fresh returns base, or base-2, base-3, ... if base exists: a default run
// directory that never collides with an earlier run.
func Fresh(base string) string {
	dir := base
	for i := 2; ; i++ {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			return dir
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}
