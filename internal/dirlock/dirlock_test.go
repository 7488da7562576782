package dirlock

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trmaml/trmaml/internal/treetest"
)

func TestSecondHolderRefusedWithName(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(dir)
	if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "pid ") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second Acquire: %v, want ErrHeld naming the directory and the holder's pid", err)
	}
	l.Release()
	l2, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()
}

// TestStaleLockFromKilledProcess: a process that holds the lock and is
// killed with SIGKILL leaves the file with its name in it, and the lock is
// free at once.
func TestStaleLockFromKilledProcess(t *testing.T) {
	if os.Getenv("DIRLOCK_HOLD") != "" {
		if _, err := Acquire(os.Getenv("DIRLOCK_HOLD")); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("held\n")
		select {}
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestStaleLockFromKilledProcess$")
	cmd.Env = append(os.Environ(), "DIRLOCK_HOLD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf) != "held\n" {
		t.Fatalf("child did not take the lock: %q %v", buf, err)
	}
	if _, err := Acquire(dir); !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "TestStaleLock") {
		t.Errorf("while the child holds it: %v, want ErrHeld naming its command", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if data, _ := os.ReadFile(dir + "/" + Name); len(data) == 0 {
		t.Error("the killed holder's name is gone from the lock file")
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("stale lock blocks: %v", err)
	}
	l.Release()
}

// TestHolder: Holder sees a held lock and its holder, a released one and a
// directory that never had one as free, and takes nothing itself.
func TestHolder(t *testing.T) {
	dir := t.TempDir()
	if _, held, err := Holder(dir); held || err != nil {
		t.Fatalf("no lock file: held %v, %v", held, err)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, held, err := Holder(dir)
	if !held || err != nil || !strings.Contains(h, "pid ") {
		t.Fatalf("held lock: %q, held %v, %v", h, held, err)
	}
	l.Release()
	if _, held, err := Holder(dir); held || err != nil {
		t.Fatalf("released lock: held %v, %v", held, err)
	}
	l, err = Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Holder: %v", err)
	}
	l.Release()
}

// TestJustStartedHolderNamed: a holder that has taken the lock but not yet
// written its name is waited for, and named, instead of being reported as
// nameless.
func TestJustStartedHolderNamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f, err := os.OpenFile(filepath.Join(dir, Name), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		time.Sleep(50 * time.Millisecond)
		f.WriteAt([]byte("pid 4242 on host, \"trmaml train\", since now\n"), 0)
		close(done)
	}()
	_, err = Acquire(dir)
	<-done
	if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "pid 4242") {
		t.Errorf("lock taken by a holder that wrote its name late: %v, want it named", err)
	}
}

// TestKilledHolderNameNotBlamed: the lock file still holds the name of a
// killed holder when a new holder takes the lock; a refusal in the moment
// before the new holder writes its own name names the new holder, not the
// dead one.
func TestKilledHolderNameNotBlamed(t *testing.T) {
	t.Parallel()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("cannot start a process:", err)
	}
	host, _ := os.Hostname()
	dir := t.TempDir()
	path := filepath.Join(dir, Name)
	stale := fmt.Sprintf("pid %d on %s, \"trmaml train\", since then\n", dead.Process.Pid, host)
	if err := os.WriteFile(path, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	if !gone(stale) || gone(fmt.Sprintf("pid %d on %s, \"x\", since now", os.Getpid(), host)) || gone(fmt.Sprintf("pid %d on another-host-%s, \"x\"", dead.Process.Pid, host)) {
		t.Fatal("gone: a dead pid of this host not gone, or a live or foreign one gone")
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		time.Sleep(50 * time.Millisecond)
		f.Truncate(0)
		f.WriteAt([]byte("pid 4242 on host, \"trmaml train\", since now\n"), 0)
		close(done)
	}()
	_, err = Acquire(dir)
	<-done
	if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "pid 4242") {
		t.Errorf("a new holder behind a killed one's name: %v, want the new holder named", err)
	}
}

// TestRefusesWhatIsNotALockFile: a symbolic link (to a file, to a directory,
// dangling), a directory, a FIFO, a second name of another file and a
// regular file with other content at .lock are refused by Acquire and
// Holder, naming .lock and what it is, and no byte of anything changes: the
// lock can never be turned into a write elsewhere.
func TestRefusesWhatIsNotALockFile(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(dir, victim string) error
		what string
	}{
		{"symlink to a file", func(d, v string) error { return os.Symlink(v, filepath.Join(d, Name)) }, "a symbolic link"},
		{"relative symlink to a sibling", func(d, v string) error {
			os.WriteFile(filepath.Join(d, "config.yaml"), []byte("seed: 1\n"), 0o644)
			return os.Symlink("config.yaml", filepath.Join(d, Name))
		}, "a symbolic link"},
		{"symlink to a directory", func(d, v string) error { return os.Symlink(filepath.Dir(v), filepath.Join(d, Name)) }, "a symbolic link"},
		{"dangling symlink", func(d, v string) error { return os.Symlink(v+".absent", filepath.Join(d, Name)) }, "a symbolic link"},
		{"directory", func(d, v string) error { return os.Mkdir(filepath.Join(d, Name), 0o755) }, "a directory"},
		{"fifo", func(d, v string) error { return syscall.Mkfifo(filepath.Join(d, Name), 0o644) }, "not a regular file"},
		{"hard link", func(d, v string) error { return os.Link(v, filepath.Join(d, Name)) }, "2 names"},
		{"other content", func(d, v string) error {
			return os.WriteFile(filepath.Join(d, Name), []byte("seed: 1\nalpha: 0.01\n"), 0o644)
		}, "does not hold a lock holder's name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "run")
			os.Mkdir(dir, 0o755)
			victim := filepath.Join(root, "victim")
			os.WriteFile(victim, []byte("precious\n"), 0o644)
			if err := c.make(dir, victim); err != nil {
				t.Fatal(err)
			}
			before := treetest.Of(t, root)
			l, err := Acquire(dir)
			if err == nil {
				l.Release()
				t.Fatal("Acquire accepted it")
			}
			if !strings.HasPrefix(err.Error(), filepath.Join(dir, Name)+": ") || !strings.Contains(err.Error(), c.what) {
				t.Errorf("Acquire: %v, want it to name %s as %s", err, Name, c.what)
			}
			if _, _, err := Holder(dir); err == nil || !strings.Contains(err.Error(), c.what) {
				t.Errorf("Holder: %v, want a refusal naming %s", err, c.what)
			}
			if diff := before.Diff(treetest.Of(t, root)); diff != "" {
				t.Errorf("a refused lock changed files:\n%s", diff)
			}
		})
	}
}

// TestOwnLockFileReused: a lock file a killed holder left (its name in
// it) and an empty one are taken.
func TestOwnLockFileReused(t *testing.T) {
	for _, content := range []string{"", "pid 999999 on elsewhere, \"trmaml train\", since 2000-01-01T00:00:00Z\n"} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, Name), []byte(content), 0o644)
		l, err := Acquire(dir)
		if err != nil {
			t.Fatalf("lock file %q: %v", content, err)
		}
		l.Release()
	}
}
