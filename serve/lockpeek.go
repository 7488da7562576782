package serve

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/trmaml/trmaml/internal/dirlock"
)

// procLocks is the kernel's table of file locks (Linux).
var procLocks = "/proc/locks"

// peekHolder reports whether a process holds dir's lock and who, as
// experiment.Cells asks it, without taking any lock, not even the brief
// shared one dirlock.Holder takes: it looks the lock file's inode up in
// the kernel's lock table. Where that table cannot be read, a lock file
// that names a holder counts as held (a holder writes its name after
// taking the lock and clears it before giving it up; a killed one's name
// stays, so this fallback can call a dead run running).
func peekHolder(dir string) (string, bool, error) {
	path := filepath.Join(dir, dirlock.Name)
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", false, err
	}
	name := strings.TrimSpace(string(raw))
	table, err := os.ReadFile(procLocks)
	sys, ok := st.Sys().(*syscall.Stat_t)
	if err != nil || !ok {
		return name, name != "", nil
	}
	return name, locked(string(table), uint64(sys.Dev), sys.Ino), nil
}

// locked reports whether the /proc/locks text table holds a granted lock
// on the file with device dev and inode ino. Its lines read
// "1: FLOCK  ADVISORY  WRITE 17625 fe:00:5317953 0 EOF", the device's
// major and minor numbers in hex; a waiter's line has "->" after the
// number and is not a holder.
func locked(table string, dev, ino uint64) bool {
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&0xfff00
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[1] == "->" {
			continue
		}
		id := strings.Split(f[5], ":")
		if len(id) != 3 {
			continue
		}
		maj, err1 := strconv.ParseUint(id[0], 16, 64)
		mnr, err2 := strconv.ParseUint(id[1], 16, 64)
		in, err3 := strconv.ParseUint(id[2], 10, 64)
		if err1 == nil && err2 == nil && err3 == nil && maj == major && mnr == minor && in == ino {
			return true
		}
	}
	return false
}
