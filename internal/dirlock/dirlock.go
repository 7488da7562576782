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

// nameWait is how long Acquire waits for the holder of a lock to write its
// name before refusing without it.
const nameWait = 2 * time.Second

// Lock is a held directory lock.
type Lock struct{ f *os.File }

// ErrHeld is returned (wrapped, with the holder) when another process holds
// the lock.
var ErrHeld = errors.New("in use by another process")

// Acquire takes the lock of dir, which must exist, without waiting for a
// holder to finish: if another process (or another Acquire in this one)
// holds it, the error wraps ErrHeld and names the holder. A holder writes
// its name just after taking the lock (and clears it just before giving it
// up), so a lock found held without a name, or with the name of a process
// of this host that is gone (a killed holder's, not yet replaced), is tried
// again for up to nameWait: the holder is then named, or the lock was free
// after all.
func Acquire(dir string) (*Lock, error) {
	path := filepath.Join(dir, Name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	deadline := time.Now().Add(nameWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", dir, err)
		}
		holder, _ := os.ReadFile(path)
		h := strings.TrimSpace(string(holder))
		if (h == "" || gone(h)) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		f.Close()
		if h == "" {
			h = fmt.Sprintf("a process that has held it for %v without writing its name into %s", nameWait, path)
		}
		return nil, fmt.Errorf("%s is %w: %s (wait for it to finish, or use another directory)", dir, ErrHeld, h)
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

// gone reports whether holder, the content of a held lock file, names a
// process of this host that no longer exists: the name a killed holder
// left, read after a new holder took the lock and before it wrote its own.
func gone(holder string) bool {
	var pid int
	var host string
	if _, err := fmt.Sscanf(holder, "pid %d on %s", &pid, &host); err != nil || pid <= 0 {
		return false
	}
	if h, err := os.Hostname(); err != nil || h != strings.TrimSuffix(host, ",") {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
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
