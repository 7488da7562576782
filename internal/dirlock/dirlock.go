// Package dirlock gives one process at a time a directory to write: an
// exclusive flock(2) on a lock file inside it. The kernel releases the lock
// when its holder exits, however it exits, so a lock left by a killed
// process never blocks; the file also records who holds it (pid, host,
// command, start time), so that a refusal names the holder.
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Name is the lock file inside a locked directory.
const Name = ".lock"

// Lock is a held directory lock.
type Lock struct{ f *os.File }

// ErrHeld is returned (wrapped, with the holder) when another process holds
// the lock.
var ErrHeld = errors.New("in use by another process")

// Acquire takes the lock of dir, which must exist, without waiting: if
// another process (or another Acquire in this one) holds it, the error
// wraps ErrHeld and names the holder.
func Acquire(dir string) (*Lock, error) {
	path := filepath.Join(dir, Name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			h := strings.TrimSpace(string(holder))
			if h == "" {
				h = "a process that has not yet written its name"
			}
			return nil, fmt.Errorf("%s is %w: %s (wait for it to finish, or use another directory)", dir, ErrHeld, h)
		}
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	host, _ := os.Hostname()
	info := fmt.Sprintf("pid %d on %s, %q, since %s\n", os.Getpid(), host, strings.Join(os.Args, " "), time.Now().UTC().Format(time.RFC3339))
	// The holder's name only serves refusal messages: failing to write it
	// does not make the lock less held.
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(info), 0)
	}
	return &Lock{f: f}, nil
}

// Release gives the lock up. The file stays: removing it would let a
// process that opened it just before lock a file no longer in the directory.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		l.f.Truncate(0)
		l.f.Close() // closing the last descriptor releases the flock
		l.f = nil
	}
}

// Holder reports whether some process holds dir's lock and, if so, who (as
// recorded in the lock file), without taking the lock or writing anything:
// for status displays. A directory without a lock file is not held.
func Holder(dir string) (holder string, held bool, err error) {
	path := filepath.Join(dir, Name)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		b, _ := os.ReadFile(path)
		return strings.TrimSpace(string(b)), true, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("checking the lock of %s: %w", dir, err)
	}
	return "", false, nil // the shared lock goes with f.Close
}
