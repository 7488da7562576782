// Package treetest records a directory tree so that a test can check a
// refused or read-only call changed nothing on disk: every path with its
// type and permissions, a link's target, and the SHA-256 of a file's bytes
// (or that it is unreadable).
package treetest

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Tree maps each path under a root to what is recorded of it.
type Tree map[string]string

// Of records every entry under root, root included. Links are recorded,
// not followed.
func Of(t testing.TB, root string) Tree {
	t.Helper()
	tree := Tree{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		entry := info.Mode().String()
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			entry += " -> " + target
		case info.Mode().IsRegular():
			// A file the test made unreadable is recorded as such.
			if raw, err := os.ReadFile(p); err != nil {
				entry += " unreadable"
			} else {
				entry += fmt.Sprintf(" %d bytes sha256 %x", len(raw), sha256.Sum256(raw))
			}
		}
		tree[p] = entry
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// Diff lists, one per line and sorted, the paths that after made, removed
// or changed relative to before; it is empty when the trees are the same.
func (before Tree) Diff(after Tree) string {
	var lines []string
	for p, was := range before {
		now, ok := after[p]
		switch {
		case !ok:
			lines = append(lines, "removed "+p)
		case now != was:
			lines = append(lines, fmt.Sprintf("changed %s: %s, was %s", p, now, was))
		}
	}
	for p, now := range after {
		if _, ok := before[p]; !ok {
			lines = append(lines, fmt.Sprintf("made %s: %s", p, now))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
