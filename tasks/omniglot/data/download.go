package data

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CanonicalBaseURL is the dataset's home: the python/ folder of the
// brendenlake/omniglot repository, which holds images_background.zip and
// images_evaluation.zip.
const CanonicalBaseURL = "https://github.com/brendenlake/omniglot/raw/master/python"

// PartialDir is the folder of the omniglot directory that holds downloads
// in progress; the loader never reads it.
const PartialDir = ".partial"

// DownloadOptions configures Download. The zero value downloads from
// CanonicalBaseURL with http.DefaultClient, silently, resuming an
// interrupted transfer up to 3 times.
type DownloadOptions struct {
	BaseURL  string       // where images_<set>.zip live; "" means CanonicalBaseURL
	Client   *http.Client // nil means http.DefaultClient
	Progress io.Writer    // progress bars go here (stderr in the CLI); nil for none
	// Resumes is how many times an interrupted transfer is resumed (HTTP
	// Range) before Download gives up; 0 means 3, a negative value none.
	Resumes int
}

// Download fetches the archives into root/omniglot. For each set it skips
// an archive (or extracted folder) already in place that verifies; else it
// downloads into root/omniglot/.partial/, resuming a partial file left by an
// earlier attempt with an HTTP Range request, verifies the archive by content
// (counts and SHA-256 of its PNGs) and only then renames it into place. A
// download that fails verification is deleted and refused with an error
// naming it; a file already in place that fails is reported and left alone.
func Download(ctx context.Context, root string, opt DownloadOptions) error {
	if opt.BaseURL == "" {
		opt.BaseURL = CanonicalBaseURL
	}
	if u, err := url.Parse(opt.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("-url %q: want an http:// or https:// URL with a host, the folder of images_background.zip and images_evaluation.zip (default %s)", opt.BaseURL, CanonicalBaseURL)
	}
	if opt.Client == nil {
		opt.Client = http.DefaultClient
	}
	switch {
	case opt.Resumes == 0:
		opt.Resumes = 3
	case opt.Resumes < 0:
		opt.Resumes = 0
	}
	dir := filepath.Join(root, Dir)
	partial := filepath.Join(dir, PartialDir)
	if err := os.MkdirAll(partial, 0o755); err != nil {
		return err
	}
	defer removeIfEmpty(partial)
	for _, s := range sets {
		done, err := inPlace(dir, s, opt.Progress)
		if err != nil {
			return err
		}
		if done {
			continue
		}
		name := s.name + ".zip"
		part := filepath.Join(partial, name)
		url := strings.TrimSuffix(opt.BaseURL, "/") + "/" + name
		if err := fetch(ctx, opt, url, part); err != nil {
			return err
		}
		src, err := openZip(part, s)
		if err == nil {
			err = src.verify()
		}
		if err != nil {
			os.Remove(part)
			return fmt.Errorf("downloaded %s from %s is not the Omniglot release, deleted it: %w", name, url, err)
		}
		if err := syncFile(part); err != nil {
			return err
		}
		if err := os.Rename(part, filepath.Join(dir, name)); err != nil {
			return err
		}
		progressf(opt.Progress, "%s: verified, saved as %s\n", name, filepath.Join(dir, name))
	}
	return nil
}

// inPlace reports whether set s is already present in dir and verifies.
func inPlace(dir string, s set, progress io.Writer) (bool, error) {
	src, err := openSource(dir, s)
	if errors.Is(err, errNoSource) {
		return false, nil
	}
	if err == nil {
		err = src.verify()
	}
	if err != nil {
		return false, fmt.Errorf("a file already in place fails verification (move it away to download again): %w", err)
	}
	progressf(progress, "%s: already in place and verified (%s)\n", s.name, src.where)
	return true, nil
}

// syncFile flushes a verified download to disk before it is renamed into
// place, so that a crash cannot leave a short file under the final name.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeIfEmpty removes the partial-download folder once nothing is left
// to resume.
func removeIfEmpty(dir string) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) == 0 {
		os.Remove(dir)
	}
}

func progressf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

// fetch downloads url into part, resuming from part's current length, and
// retrying an interrupted transfer up to opt.Resumes times. A partial file
// survives a failure so that the next call resumes it.
func fetch(ctx context.Context, opt DownloadOptions, url, part string) error {
	for attempt := 0; ; attempt++ {
		err := fetchOnce(ctx, opt, url, part)
		var interrupted *interruptedError
		if err == nil || !errors.As(err, &interrupted) || attempt >= opt.Resumes || ctx.Err() != nil {
			return err
		}
		progressf(opt.Progress, "%s: %v; resuming\n", filepath.Base(part), err)
	}
}

// interruptedError is a transfer cut short, worth resuming.
type interruptedError struct {
	part string
	have int64
	err  error
}

func (e *interruptedError) Error() string {
	return fmt.Sprintf("download interrupted after %d bytes (%v); kept in %s, run the same command again to resume", e.have, e.err, e.part)
}

func (e *interruptedError) Unwrap() error { return e.err }

func fetchOnce(ctx context.Context, opt DownloadOptions, url, part string) error {
	var have int64
	if fi, err := os.Stat(part); err == nil {
		have = fi.Size()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	resp, err := opt.Client.Do(req)
	if err != nil {
		return &interruptedError{part, have, err}
	}
	defer resp.Body.Close()

	flags := os.O_WRONLY | os.O_CREATE
	total := int64(-1)
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		start, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != have {
			return fmt.Errorf("GET %s: resuming at byte %d, the server answered Content-Range %q", url, have, resp.Header.Get("Content-Range"))
		}
		flags |= os.O_APPEND
		total = size
	case resp.StatusCode == http.StatusOK:
		flags |= os.O_TRUNC // no range support, or a fresh start
		have = 0
		total = resp.ContentLength
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have > 0:
		return nil // the partial file is complete already; verification decides
	default:
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return err
	}
	bar := &progressBar{w: opt.Progress, name: filepath.Base(part), done: have, total: total}
	n, err := io.Copy(f, io.TeeReader(resp.Body, bar))
	bar.finish()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && total >= 0 && have+n != total {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return &interruptedError{part, have + n, err}
	}
	return nil
}

// parseContentRange reads "bytes START-END/SIZE" (SIZE may be "*").
func parseContentRange(v string) (start, size int64, ok bool) {
	rest, found := strings.CutPrefix(v, "bytes ")
	if !found {
		return 0, 0, false
	}
	span, total, found := strings.Cut(rest, "/")
	first, _, found2 := strings.Cut(span, "-")
	if !found || !found2 {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	size = -1
	if total != "*" {
		if size, err = strconv.ParseInt(total, 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return start, size, true
}

// progressBar draws "name [=====     ]  52%  4.4/8.4 MB" on one line,
// redrawn at most every 100 ms.
type progressBar struct {
	w           io.Writer
	name        string
	done, total int64
	last        time.Time
}

func (p *progressBar) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if p.w != nil && time.Since(p.last) >= 100*time.Millisecond {
		p.last = time.Now()
		p.draw()
	}
	return len(b), nil
}

func (p *progressBar) draw() {
	const width = 30
	if p.total <= 0 {
		fmt.Fprintf(p.w, "\r%s %.1f MB", p.name, float64(p.done)/1e6)
		return
	}
	filled := int(width * p.done / p.total)
	filled = max(0, min(width, filled))
	fmt.Fprintf(p.w, "\r%s [%s%s] %3d%% %5.1f/%.1f MB", p.name, strings.Repeat("=", filled), strings.Repeat(" ", width-filled),
		100*p.done/p.total, float64(p.done)/1e6, float64(p.total)/1e6)
}

func (p *progressBar) finish() {
	if p.w != nil {
		p.draw()
		fmt.Fprintln(p.w)
	}
}
