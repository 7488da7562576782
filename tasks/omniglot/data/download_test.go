package data

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// archiveServer serves the shared archives (or what serve returns for a
// file) under /python/NAME, honouring Range requests through
// http.ServeContent unless serve handles the request itself. It records
// every request's path and Range header.
type archiveServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
	files    map[string][]byte
}

func newArchiveServer(t *testing.T, serve func(w http.ResponseWriter, r *http.Request, name string, data []byte, nth int) bool) *archiveServer {
	t.Helper()
	root := sharedRoot(t)
	s := &archiveServer{files: map[string][]byte{}}
	for _, set := range sets {
		s.files[set.name+".zip"] = mustReadFile(t, filepath.Join(root, Dir, set.name+".zip"))
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/python/")
		s.mu.Lock()
		s.requests = append(s.requests, name+" "+r.Header.Get("Range"))
		nth := 0
		for _, q := range s.requests {
			if strings.HasPrefix(q, name+" ") {
				nth++
			}
		}
		data, ok := s.files[name]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		if serve != nil && serve(w, r, name, data, nth) {
			return
		}
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *archiveServer) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// cutHalfway answers a request with the full length announced but only the
// first half of the body, then drops the connection.
func cutHalfway(w http.ResponseWriter, data []byte) {
	w.Header().Set("Content-Length", itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	w.Write(data[:len(data)/2])
	w.(http.Flusher).Flush()
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// checkInPlace verifies a completed download: the archives in place and
// verified, no partial files left.
func checkInPlace(t *testing.T, root string) {
	t.Helper()
	if err := Verify(root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, Dir, PartialDir)); !os.IsNotExist(err) {
		t.Errorf("partial folder left behind: %v", err)
	}
}

// noData asserts that nothing a reader would take for data is in place.
func noData(t *testing.T, root string) {
	t.Helper()
	for _, s := range sets {
		for _, p := range []string{s.name + ".zip", s.name} {
			if _, err := os.Stat(filepath.Join(root, Dir, p)); err == nil {
				t.Errorf("%s is in place", p)
			}
		}
	}
	if _, err := Load(root, Options{Size: 28, NoCache: true}); !errors.Is(err, ErrMissing) {
		t.Errorf("Load after a failed download: %v", err)
	}
}

func TestDownload(t *testing.T) {
	t.Parallel()
	srv := newArchiveServer(t, nil)
	root := t.TempDir()
	var progress bytes.Buffer
	if err := Download(context.Background(), root, DownloadOptions{BaseURL: srv.URL + "/python/", Progress: &progress}); err != nil {
		t.Fatal(err)
	}
	checkInPlace(t, root)
	if !strings.Contains(progress.String(), "images_background.zip [==============================] 100%") {
		t.Errorf("no finished progress bar in:\n%s", progress.String())
	}
	// A second run finds everything verified and fetches nothing.
	progress.Reset()
	before := len(srv.log())
	if err := Download(context.Background(), root, DownloadOptions{BaseURL: srv.URL + "/python", Progress: &progress}); err != nil {
		t.Fatal(err)
	}
	if len(srv.log()) != before || strings.Count(progress.String(), "already in place and verified") != 2 {
		t.Errorf("second run made %d requests and said:\n%s", len(srv.log())-before, progress.String())
	}
}

// TestDownloadResumesAfterCut: the server drops the first connection for
// each archive half-way; Download resumes with a Range request for the rest.
func TestDownloadResumesAfterCut(t *testing.T) {
	t.Parallel()
	srv := newArchiveServer(t, func(w http.ResponseWriter, r *http.Request, name string, data []byte, nth int) bool {
		if nth == 1 {
			cutHalfway(w, data)
			return true
		}
		return false
	})
	root := t.TempDir()
	var progress bytes.Buffer
	if err := Download(context.Background(), root, DownloadOptions{BaseURL: srv.URL + "/python", Progress: &progress}); err != nil {
		t.Fatal(err)
	}
	checkInPlace(t, root)
	log := srv.log()
	if len(log) != 4 || !strings.HasPrefix(log[1], "images_background.zip bytes=") || log[1] == "images_background.zip bytes=0-" {
		t.Errorf("requests %q, want a fresh and a ranged request per archive", log)
	}
	if !strings.Contains(progress.String(), "resuming") {
		t.Errorf("progress does not mention the resume:\n%s", progress.String())
	}
}

// TestDownloadResumesAcrossRuns: without retries the cut leaves a partial
// file where no reader looks; the next run resumes it.
func TestDownloadResumesAcrossRuns(t *testing.T) {
	t.Parallel()
	cut := true
	srv := newArchiveServer(t, func(w http.ResponseWriter, r *http.Request, name string, data []byte, nth int) bool {
		if cut {
			cutHalfway(w, data)
			return true
		}
		return false
	})
	root := t.TempDir()
	err := Download(context.Background(), root, DownloadOptions{BaseURL: srv.URL + "/python", Resumes: -1})
	if err == nil || !strings.Contains(err.Error(), "run the same command again to resume") {
		t.Fatalf("got %v", err)
	}
	part := filepath.Join(root, Dir, PartialDir, "images_background.zip")
	fi, err := os.Stat(part)
	if err != nil || fi.Size() == 0 {
		t.Fatalf("partial file: %v", err)
	}
	noData(t, root)
	cut = false
	if err := Download(context.Background(), root, DownloadOptions{BaseURL: srv.URL + "/python"}); err != nil {
		t.Fatal(err)
	}
	checkInPlace(t, root)
	if log := srv.log(); log[1] != "images_background.zip bytes="+itoa(int(fi.Size()))+"-" {
		t.Errorf("requests %q, want the second to resume at byte %d", log, fi.Size())
	}
}

// TestDownloadWithoutRangeSupport: a server that ignores Range sends the
// whole file again, which replaces the partial one.
func TestDownloadWithoutRangeSupport(t *testing.T) {
	t.Parallel()
	srv := newArchiveServer(t, func(w http.ResponseWriter, r *http.Request, name string, data []byte, nth int) bool {
		if nth == 1 {
			cutHalfway(w, data)
		} else {
			w.Write(data)
		}
		return true
	})
	root := t.TempDir()
	if err := Download(context.Background(), root, DownloadOptions{BaseURL: srv.URL + "/python"}); err != nil {
		t.Fatal(err)
	}
	checkInPlace(t, root)
}

func TestDownloadRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		serve func(w http.ResponseWriter, r *http.Request, name string, data []byte, nth int) bool
		want  []string
	}{
		{"corrupted archive", func(w http.ResponseWriter, r *http.Request, name string, data []byte, nth int) bool {
			bad := bytes.Clone(data)
			bad[len(bad)/2] ^= 0x55
			w.Write(bad)
			return true
		}, []string{"downloaded images_background.zip from", "is not the Omniglot release, deleted it", "checksum error"}},
		{"truncated archive", func(w http.ResponseWriter, r *http.Request, name string, data []byte, nth int) bool {
			w.Write(data[:len(data)-1000])
			return true
		}, []string{"downloaded images_background.zip", "not a readable zip archive"}},
		{"wrong archive", func(w http.ResponseWriter, r *http.Request, name string, data []byte, nth int) bool {
			if name == "images_evaluation.zip" { // the background archive under the evaluation name
				w.Write(mustReadFile(t, filepath.Join(sharedRoot(t), Dir, "images_background.zip")))
				return true
			}
			return false
		}, []string{"downloaded images_evaluation.zip", "no PNG files under images_evaluation/"}},
		{"not found", func(w http.ResponseWriter, r *http.Request, name string, data []byte, nth int) bool {
			http.NotFound(w, r)
			return true
		}, []string{"/python/images_background.zip: 404 Not Found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newArchiveServer(t, tt.serve)
			root := t.TempDir()
			err := Download(context.Background(), root, DownloadOptions{BaseURL: srv.URL + "/python"})
			if err == nil {
				t.Fatal("downloaded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if _, err := os.Stat(filepath.Join(root, Dir, PartialDir)); !os.IsNotExist(err) {
				t.Errorf("%s left behind: %v", PartialDir, err)
			}
			if tt.name != "wrong archive" {
				noData(t, root)
			}
		})
	}
}

// TestDownloadRefusesMalformedURL: a base URL that is not http(s)://HOST
// is refused before anything is created under the data root (the data
// root and its omniglot folder were made, then the request failed).
func TestDownloadRefusesMalformedURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"ht!tp://x", "ftp://example.org/python", "example.org/python", "http://", "file:///tmp/omniglot"} {
		root := filepath.Join(t.TempDir(), "data")
		err := Download(context.Background(), root, DownloadOptions{BaseURL: u})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("-url %q", u)) || !strings.Contains(err.Error(), "want an http:// or https:// URL") {
			t.Errorf("%s: %v, want a refusal naming -url and what it wants", u, err)
		}
		if _, err := os.Stat(root); !os.IsNotExist(err) {
			t.Errorf("%s: the data root was created (%v)", u, err)
		}
	}
}

// TestDownloadLeavesBadFileInPlace: a damaged archive already in place is
// reported and left alone (it may be the user's), not overwritten.
func TestDownloadLeavesBadFileInPlace(t *testing.T) {
	t.Parallel()
	srv := newArchiveServer(t, nil)
	root := t.TempDir()
	bad := filepath.Join(root, Dir, "images_background.zip")
	if err := os.MkdirAll(filepath.Dir(bad), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Download(context.Background(), root, DownloadOptions{BaseURL: srv.URL})
	if err == nil || !strings.Contains(err.Error(), "already in place fails verification") || !strings.Contains(err.Error(), bad) {
		t.Fatalf("got %v", err)
	}
	if string(mustReadFile(t, bad)) != "not a zip" || len(srv.log()) != 0 {
		t.Error("the file in place was touched or a download started")
	}
}

func TestParseContentRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in          string
		start, size int64
		ok          bool
	}{
		{"bytes 100-199/200", 100, 200, true},
		{"bytes 0-9/*", 0, -1, true},
		{"bytes */200", 0, 0, false},
		{"items 1-2/3", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tt := range tests {
		start, size, ok := parseContentRange(tt.in)
		if ok != tt.ok || ok && (start != tt.start || size != tt.size) {
			t.Errorf("%q: %d %d %v", tt.in, start, size, ok)
		}
	}
}

// TestDataCommandRefusesConflictingFlags: flags that the command would
// ignore are refused, naming them: -verify beside -info (only the listing
// was printed, the archives were never verified), -url beside either, and
// an empty -dir (taken as the default data root).
func TestDataCommandRefusesConflictingFlags(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-dir", root, "-info", "-verify"}, "give at most one of -info and -verify"},
		{[]string{"-dir", root, "-verify", "-url", "https://example.org/x"}, "-url goes with downloading, not with -info or -verify"},
		{[]string{"-dir", root, "-info", "-url", "https://example.org/x"}, "-url goes with downloading, not with -info or -verify"},
		{[]string{"-dir", "", "-verify"}, "-dir is empty"},
	} {
		err := side{}.DataCommand(context.Background(), c.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	if entries, err := os.ReadDir(root); err != nil || len(entries) > 0 {
		t.Errorf("the refused calls wrote into the data root: %v, %v", entries, err)
	}
}
