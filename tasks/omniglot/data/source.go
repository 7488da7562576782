package data

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A set is one of the two halves of the dataset as released: an archive
// images_<set>.zip or its extracted folder images_<set>/.
type set struct {
	name       string // "images_background" or "images_evaluation"
	characters int    // expected number of character folders
	images     int    // expected number of PNG files
	sha256     string // expected SHA-256 of the set's PNGs concatenated in sorted path order
}

// ContentSHA256 is the published SHA-256 of all PNG files of both sets
// concatenated in byte-wise sorted path order (paths such as
// "images_background/Tifinagh/character55/0964_20.png").
const ContentSHA256 = "b13150a8cb4a132a88b8e6fcc46cf10c8302ff6db261fe791b45f9eb768cc820"

// A Release is the content an Omniglot-format data root must hold for Load
// to accept it: the counts and content hashes of its two sets. Load checks
// the published dataset (Published) unless told otherwise; Describe makes
// the Release of other data in the same layout (a subset, new drawings, a
// test fixture), so that loading it is checked just as strictly.
type Release struct {
	Background SetContent // images_background
	Evaluation SetContent // images_evaluation
	// ContentSHA256 is the SHA-256 of both sets' PNGs concatenated in
	// byte-wise sorted path order (every background path sorts first).
	ContentSHA256 string
}

// SetContent is what one set of a Release holds.
type SetContent struct {
	Characters int    // character folders
	Images     int    // PNG files
	SHA256     string // of the set's PNGs concatenated in sorted path order
}

// Published is the Omniglot release of github.com/brendenlake/omniglot.
// The per-set hashes were computed from the copy whose combined hash is
// ContentSHA256 (every background path sorts before every evaluation path,
// so the combined hash is the hash of the background stream followed by the
// evaluation stream); they let a failed check name the file at fault.
func Published() Release {
	return Release{
		Background:    SetContent{964, 19280, "b38e1a99da123d983059b091375d7270c294113555d7036a950dc89b3250b80f"},
		Evaluation:    SetContent{659, 13180, "4cee9ec535395b4f7eb89b9e352656aebf0972a41fe46139f4238eb23b022f8b"},
		ContentSHA256: ContentSHA256,
	}
}

// setNames are the two sets' names, background first.
var setNames = [2]string{"images_background", "images_evaluation"}

// list gives the release's sets in order.
func (r Release) list() []set {
	return []set{
		{setNames[0], r.Background.Characters, r.Background.Images, r.Background.SHA256},
		{setNames[1], r.Evaluation.Characters, r.Evaluation.Images, r.Evaluation.SHA256},
	}
}

// sets are the two halves of the published release with their expected
// content.
var sets = Published().list()

// pngFile is one PNG of a source, addressed by its slash-separated path
// inside the set ("images_background/ALPHABET/characterNN/NNNN_MM.png").
type pngFile struct {
	path                        string
	alphabet, character, drawer string
	open                        func() (io.ReadCloser, error)
}

// source is the listing of one set read from its archive or folder, in
// byte-wise sorted path order.
type source struct {
	set    set
	where  string // the archive or folder it came from, for messages
	images []pngFile
}

// errNoSource reports that a set has neither its archive nor its folder.
var errNoSource = errors.New("not found")

// openSource lists set s of the Omniglot directory dir (DIR/omniglot): the
// archive dir/images_<set>.zip if it exists, else the folder
// dir/images_<set>/. It checks the layout, not the content.
func openSource(dir string, s set) (*source, error) {
	zipPath := filepath.Join(dir, s.name+".zip")
	if _, err := os.Stat(zipPath); err == nil {
		return openZip(zipPath, s)
	}
	folder := filepath.Join(dir, s.name)
	if fi, err := os.Stat(folder); err == nil && fi.IsDir() {
		return openFolder(folder, s)
	}
	return nil, fmt.Errorf("%s: neither %s nor %s/: %w", s.name, zipPath, folder, errNoSource)
}

// openZip lists the PNGs of archive path. Entries outside the set's folder
// (such as __MACOSX/) and directories are ignored. The archive (a few MB) is
// read into memory, so a listing holds no open file and reading its 20,000
// entries costs no system calls.
func openZip(path string, s set) (*source, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable zip archive (truncated or corrupt?): %w", path, err)
	}
	src := &source{set: s, where: path}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || !strings.HasPrefix(f.Name, s.name+"/") {
			continue
		}
		im, err := parsePath(f.Name, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if im.path == "" {
			continue
		}
		im.open = f.Open
		src.images = append(src.images, im)
	}
	return src.sorted()
}

// openFolder lists the PNGs under the extracted folder path.
func openFolder(path string, s set) (*source, error) {
	src := &source{set: s, where: path + string(filepath.Separator)}
	root := filepath.Dir(path)
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		im, err := parsePath(filepath.ToSlash(rel), s)
		if err != nil || im.path == "" {
			return err
		}
		im.open = func() (io.ReadCloser, error) { return os.Open(p) }
		src.images = append(src.images, im)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return src.sorted()
}

// parsePath splits a PNG path SET/ALPHABET/CHARACTER/DRAWING.png. Files that
// are not PNGs give an empty image (ignored); a PNG at another depth is an
// error.
func parsePath(p string, s set) (pngFile, error) {
	if !strings.HasSuffix(p, ".png") {
		return pngFile{}, nil
	}
	parts := strings.Split(p, "/")
	if len(parts) != 4 || parts[0] != s.name || parts[1] == "" || parts[2] == "" {
		return pngFile{}, fmt.Errorf("%s: not of the form %s/ALPHABET/CHARACTER/IMAGE.png", p, s.name)
	}
	return pngFile{path: p, alphabet: parts[1], character: parts[2], drawer: parts[3]}, nil
}

func (s *source) sorted() (*source, error) {
	slices.SortFunc(s.images, func(a, b pngFile) int { return strings.Compare(a.path, b.path) })
	if len(s.images) == 0 {
		return nil, fmt.Errorf("%s: no PNG files under %s/", s.where, s.set.name)
	}
	return s, nil
}

// counts returns the number of characters and images of the source.
func (s *source) counts() (characters, images int) {
	prev := ""
	for _, im := range s.images {
		if key := im.alphabet + "/" + im.character; key != prev {
			characters++
			prev = key
		}
	}
	return characters, len(s.images)
}

// checkCounts compares the character and image counts with the release's.
func (s *source) checkCounts() error {
	c, n := s.counts()
	if c != s.set.characters || n != s.set.images {
		return fmt.Errorf("%s: %d characters and %d images, want %d and %d (incomplete or not Omniglot)",
			s.where, c, n, s.set.characters, s.set.images)
	}
	return nil
}

// hashTo writes every PNG's bytes to w in sorted path order; reading an
// archive entry to its end also checks its CRC-32.
func (s *source) hashTo(w io.Writer) error {
	buf := make([]byte, 32<<10) // one buffer, not one per file
	for _, im := range s.images {
		if err := copyImage(w, im, buf); err != nil {
			return fmt.Errorf("%s: %w", s.where, err)
		}
	}
	return nil
}

// copyImage copies the file im to w through buf (nil: io.Copy's own).
func copyImage(w io.Writer, im pngFile, buf []byte) error {
	r, err := im.open()
	if err != nil {
		return fmt.Errorf("%s: %w", im.path, err)
	}
	_, err = io.CopyBuffer(w, r, buf)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", im.path, err)
	}
	return nil
}

// sum returns the SHA-256 of the source's PNGs in sorted path order.
func (s *source) sum() (string, error) {
	h := sha256.New()
	if err := s.hashTo(h); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// verify checks a source completely: counts, readable entries and the
// per-set content hash.
func (s *source) verify() error {
	if err := s.checkCounts(); err != nil {
		return err
	}
	sum, err := s.sum()
	if err != nil {
		return err
	}
	if sum != s.set.sha256 {
		return fmt.Errorf("%s: content SHA-256 %s, want %s (corrupt or modified images)", s.where, sum, s.set.sha256)
	}
	return nil
}

// contentSums hashes the sources in order: the SHA-256 of all their PNGs
// (the sources' paths sort in the order given, so this is the hash over the
// sorted union) and each source's own.
func contentSums(srcs []*source) (all string, perSet []string, err error) {
	total := sha256.New()
	for _, s := range srcs {
		h := sha256.New()
		if err := s.hashTo(io.MultiWriter(total, h)); err != nil {
			return "", nil, err
		}
		perSet = append(perSet, hex.EncodeToString(h.Sum(nil)))
	}
	return hex.EncodeToString(total.Sum(nil)), perSet, nil
}
