package imagecache

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func testSet() *Set {
	s := &Set{H: 3, W: 2, C: 3, Pix: make([]uint8, 4*3*2*3)}
	for i := range s.Pix {
		s.Pix[i] = uint8(i * 7)
	}
	return s
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	key := Key{Content: [32]byte{1, 2}, Settings: "84x84 bilinear"}
	s := testSet()
	path, err := Write(dir, key, s)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != key.Name() {
		t.Errorf("written to %s, want %s", path, key.Name())
	}
	got, err := Read(dir, key)
	if err != nil {
		t.Fatal(err)
	}
	if got.H != 3 || got.W != 2 || got.C != 3 || got.Len() != 4 || !bytes.Equal(got.Pix, s.Pix) {
		t.Errorf("read %dx%dx%d, %d images, want the written 3x2x3, 4", got.H, got.W, got.C, got.Len())
	}
	if !bytes.Equal(got.Image(1), s.Pix[18:36]) {
		t.Error("Image(1) is not the second image")
	}
	for _, other := range []Key{{Content: [32]byte{1, 3}, Settings: key.Settings}, {Content: key.Content, Settings: "84x84 nearest"}} {
		if other.Name() == key.Name() {
			t.Errorf("key %v names the same file as %v", other, key)
		}
		if _, err := Read(dir, other); !errors.Is(err, ErrMiss) {
			t.Errorf("Read of another key: %v, want ErrMiss", err)
		}
	}
}

// TestDamageRefused: a cache file with a flipped pixel, cut short or with
// another header is refused with the path, never read as data.
func TestDamageRefused(t *testing.T) {
	key := Key{Content: [32]byte{9}, Settings: "s"}
	for _, tc := range []struct {
		name string
		harm func([]byte) []byte
		want string
	}{
		{"flipped pixel", func(b []byte) []byte { b[len(b)-10] ^= 1; return b }, "checksum mismatch"},
		{"truncated", func(b []byte) []byte { return b[:len(b)-20] }, "bytes, not 4 images"},
		{"not a cache", func(b []byte) []byte { return []byte("hello") }, "not a trmaml image cache"},
		{"damaged header", func(b []byte) []byte { b[len(magic)+4] = '!'; return b }, "damaged header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, err := Write(dir, key, testSet())
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(path)
			if err := os.WriteFile(path, tc.harm(b), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = Read(dir, key)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("Read: %v, want an error naming %s and %q", err, path, tc.want)
			}
		})
	}
}

// TestLoadBuildsOnceThenReads: the first Load builds and writes beside the
// data, the second reads it; concurrent first loads all succeed with equal
// sets.
func TestLoadBuildsOnceThenReads(t *testing.T) {
	data := t.TempDir()
	key := Key{Content: [32]byte{4}, Settings: "x"}
	builds := 0
	var mu sync.Mutex
	build := func() (*Set, error) {
		mu.Lock()
		builds++
		mu.Unlock()
		return testSet(), nil
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, info, err := Load(data, key, build)
			if err != nil || info.WriteErr != nil || !bytes.Equal(s.Pix, testSet().Pix) {
				t.Errorf("concurrent Load: %v, %v", err, info.WriteErr)
			}
		}()
	}
	wg.Wait()
	before := builds
	s, info, err := Load(data, key, build)
	if err != nil || !info.FromCache || builds != before || !bytes.Equal(s.Pix, testSet().Pix) {
		t.Errorf("second Load: from cache %v, builds %d -> %d, err %v", info.FromCache, before, builds, err)
	}
	if want := filepath.Join(data, DirName, key.Name()); info.Path != want {
		t.Errorf("cache at %s, want %s", info.Path, want)
	}
	entries, _ := os.ReadDir(filepath.Join(data, DirName))
	if len(entries) != 1 {
		t.Errorf("%d files in the cache folder, want 1 (no temporary files left)", len(entries))
	}
}

// TestLoadFallsBackToUserDir: data in a read-only folder is cached in the
// user cache directory.
func TestLoadFallsBackToUserDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only folders")
	}
	data, home := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home)
	if err := os.Chmod(data, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(data, 0o755)
	key := Key{Settings: "y"}
	_, info, err := Load(data, key, func() (*Set, error) { return testSet(), nil })
	if err != nil || info.WriteErr != nil {
		t.Fatal(err, info.WriteErr)
	}
	if want := filepath.Join(home, "trmaml", "images", key.Name()); info.Path != want {
		t.Errorf("cache at %s, want %s", info.Path, want)
	}
	if _, info, _ = Load(data, key, nil); !info.FromCache {
		t.Error("the second Load did not read the user cache")
	}
}

func TestHash(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := write("a", "one"), write("b", "two")
	h1, files, err := Hash([]string{a, b}, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0] != sha256.Sum256([]byte("one")) || files[1] != sha256.Sum256([]byte("two")) {
		t.Errorf("the files' SHA-256 %x, want those of one, two", files)
	}
	h2, _, _ := Hash([]string{a, b}, []string{"a", "c"})
	h3, _, _ := Hash([]string{b, a}, []string{"a", "b"})
	if h1 == h2 || h1 == h3 {
		t.Error("a renamed or swapped file keeps the hash")
	}
	if _, _, err := Hash([]string{a, filepath.Join(dir, "missing")}, []string{"a", "missing"}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Hash of a missing file: %v", err)
	}
}
