package dirlock

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
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
	f, err := openLock(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
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
		holder, _ := io.ReadAll(io.NewSectionReader(f, 0, maxHolder))
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

// openLock opens the lock file at path (creating it with flag O_CREATE),
// refusing anything but a lock file of ours: it never follows a symbolic
// link (O_NOFOLLOW), never opens a directory, FIFO or device, never a file
// with another name linked to it, and never a file whose content is not a
// holder's name, so that taking and releasing the lock, which write the
// file, can never write another file. Errors name the file and what it is.
func openLock(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		var what string
		switch {
		case errors.Is(err, syscall.ELOOP):
			what = "a symbolic link"
		case errors.Is(err, syscall.EISDIR):
			what = "a directory"
		default:
			return nil, fmt.Errorf("locking %s: %w", filepath.Dir(path), err)
		}
		return nil, notLock(path, what)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", filepath.Dir(path), err)
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	switch {
	case st.IsDir():
		err = notLock(path, "a directory")
	case !st.Mode().IsRegular():
		err = notLock(path, "not a regular file ("+st.Mode().Type().String()+")")
	case sys != nil && sys.Nlink > 1:
		err = notLock(path, fmt.Sprintf("a regular file with %d names (a hard link to another file)", sys.Nlink))
	case st.Size() > maxHolder:
		err = notLock(path, fmt.Sprintf("a regular file of %d bytes, not a lock file", st.Size()))
	default:
		b := make([]byte, st.Size())
		if _, rerr := f.ReadAt(b, 0); rerr != nil && len(b) > 0 {
			err = fmt.Errorf("locking %s: %w", filepath.Dir(path), rerr)
		} else if len(b) > 0 && !holderLine.Match(b) {
			err = notLock(path, fmt.Sprintf("a regular file that does not hold a lock holder's name (it starts %q)", b[:min(len(b), 40)]))
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// maxHolder bounds the size of a lock file's content, a holder's name.
const maxHolder = 1 << 20

// holderLine is the content Acquire writes into a held lock file (its
// start), which only a lock file of ours holds.
var holderLine = regexp.MustCompile(`^pid [0-9]+ on `)

// notLock is the refusal of a path named Name that is not a lock file.
func notLock(path, what string) error {
	return fmt.Errorf("%s: %s, not trmaml's lock file: refusing to lock the directory through it (nothing was written; remove or rename it yourself if the directory is yours)", path, what)
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
	f, err := openLock(path, os.O_RDONLY)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		b, _ := io.ReadAll(io.LimitReader(f, maxHolder))
		return strings.TrimSpace(string(b)), true, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("checking the lock of %s: %w", dir, err)
	}
	return "", false, nil // the shared lock goes with f.Close
}
