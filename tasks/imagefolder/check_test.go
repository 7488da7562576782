package imagefolder

import (
	"bytes"
	"encoding/binary"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/internal/treetest"
	_ "github.com/trmaml/trmaml/models/builtin" // the models configs name
)

// The package's tests register the family as package tasks does (which
// they cannot import: it imports this package).
func init() { configs.RegisterFamily(Family{}) }

// config is a parsed config of the imagefolder family over dir.
func config(t testing.TB, dir, section string) configs.Config {
	t.Helper()
	c, err := configs.Parse("test.yaml", []byte(`name: t
algorithm: maml
task:
  family: imagefolder
  support: 1
  query: 3
  imagefolder:
    dir: `+dir+`
`+section+`
model: {kind: conv4, conv4: {filters: 4, blocks: 2}}
meta: {iterations: 4, batch: 2}
trmaml: {p_lr: 1e-5}
eval: {every: 2, instances: 4, train_instances: 4, batch: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDataCheck: a good folder is described split by split with "no
// problems found"; a bad one lists every problem (a corrupt file, a class
// too small for K + J) and is left as it was.
func TestDataCheck(t *testing.T) {
	dir := tree{groups: 3, classes: 5, images: 4, h: 8, w: 6}.write(t)
	c := config(t, dir, "    ways: 3\n    splits: {train: [g1, g2], test: [g3]}\n    noun: category")
	var out bytes.Buffer
	if err := (Family{}).DataCheck(c, "", &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"split  categories  classes  images  fewest classes  fewest images",
		"train           2       10      40               5              4",
		" test           1        5      20               5              4",
		"test       category g3: 5 classes, 20 images",
		"images: 60 files; 60 of 6x8 (width x height); 0 greyscale, 60 colour",
		"decoded: 8x6x3",
		"no problems found",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}

	writeFile(t, filepath.Join(dir, "g1/g1c02/01.png"), "garbage")
	os.Remove(filepath.Join(dir, "g3/g3c05/00.png"))
	before := treetest.Of(t, dir)
	out.Reset()
	err := (Family{}).DataCheck(c, dir, &out)
	if err == nil || !strings.Contains(err.Error(), "2 problem(s)") {
		t.Errorf("DataCheck: %v, want 2 problems\n%s", err, out.String())
	}
	for _, want := range []string{
		filepath.Join(dir, "g1/g1c02/01.png") + ": not a readable PNG or JPEG",
		dir + ": test: class g3c05 of group g3 has 3 images, 1 shots + 3 queries need 4",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
	if diff := before.Diff(treetest.Of(t, dir)); diff != "" {
		t.Errorf("data check changed the folder:\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, ".trmaml-cache")); err == nil {
		t.Error("data check wrote a cache")
	}
}

// TestDataCheckFirstFileBad: the size and channels inferred from the
// files come from the first file that reads, so a corrupt first file is
// one problem, not one "mixed sizes" or "greyscale, want colour" per
// other image; Load lists the same one problem.
func TestDataCheckFirstFileBad(t *testing.T) {
	for _, grey := range []bool{false, true} {
		dir := tree{groups: 3, classes: 3, images: 4, h: 8, w: 6, grey: grey}.write(t)
		bad := filepath.Join(dir, "g1/g1c01/00.png") // the first file of the first training class
		writeFile(t, bad, "garbage")
		c := config(t, dir, "    ways: 3\n    splits: {train: [g1, g2], test: [g3]}")
		var out bytes.Buffer
		err := (Family{}).DataCheck(c, "", &out)
		if err == nil || !strings.Contains(err.Error(), ": 1 problem(s)") || !strings.Contains(out.String(), bad+": not a readable PNG or JPEG") {
			t.Errorf("grey %v: DataCheck: %v, want 1 problem, %s\n%s", grey, err, bad, out.String())
		}
		channels := "35 colour"
		if grey {
			channels = "35 greyscale"
		}
		if !strings.Contains(out.String(), "images: 36 files; 35 of 6x8 (width x height)") || !strings.Contains(out.String(), channels) {
			t.Errorf("grey %v: the report lacks the 35 good files' size and channels:\n%s", grey, out.String())
		}
		_, err = Load(dir, Options{NoCache: true, Section: *Section(c)})
		if de, ok := err.(*DataError); !ok || len(de.Problems) != 1 || de.Problems[0].Path != bad {
			t.Errorf("grey %v: Load: %v, want the one problem of %s", grey, err, bad)
		}
	}
}

// withOrientation is the JPEG jpg with an EXIF block (APP1) whose
// orientation tag is o, in the byte order of order ("II" or "MM").
func withOrientation(jpg []byte, o uint16, order string) []byte {
	var bo binary.AppendByteOrder = binary.LittleEndian
	if order == "MM" {
		bo = binary.BigEndian
	}
	tiff := []byte(order)
	tiff = bo.AppendUint16(tiff, 42)
	tiff = bo.AppendUint32(tiff, 8) // IFD0 follows the header
	tiff = bo.AppendUint16(tiff, 2) // two entries: resolution unit, orientation
	tiff = bo.AppendUint16(tiff, 0x0128)
	tiff = bo.AppendUint16(tiff, 3)
	tiff = bo.AppendUint32(tiff, 1)
	tiff = bo.AppendUint16(tiff, 2)
	tiff = bo.AppendUint16(tiff, 0)
	tiff = bo.AppendUint16(tiff, 0x0112)
	tiff = bo.AppendUint16(tiff, 3) // SHORT
	tiff = bo.AppendUint32(tiff, 1)
	tiff = bo.AppendUint16(tiff, o)
	tiff = bo.AppendUint16(tiff, 0)
	tiff = bo.AppendUint32(tiff, 0) // no next IFD
	app1 := append([]byte("Exif\x00\x00"), tiff...)
	seg := []byte{0xff, 0xe1, byte((len(app1) + 2) >> 8), byte(len(app1) + 2)}
	out := append([]byte{}, jpg[:2]...) // SOI
	out = append(out, seg...)
	out = append(out, app1...)
	return append(out, jpg[2:]...)
}

// TestDataCheckOrientation: a JPEG whose EXIF block says it is shown
// rotated or mirrored is decoded as stored (what PIL and torchvision's
// ImageFolder train on), and data check says so, naming the files.
func TestDataCheckOrientation(t *testing.T) {
	dir := tree{groups: 3, classes: 3, images: 4, h: 8, w: 8}.write(t)
	var plain bytes.Buffer
	if err := jpeg.Encode(&plain, synthImage(0, 0, 0, 8, 8, false), nil); err != nil {
		t.Fatal(err)
	}
	rotated := filepath.Join(dir, "g1/g1c01/r.jpg")
	writeFile(t, rotated, string(withOrientation(plain.Bytes(), 6, "II")))
	writeFile(t, filepath.Join(dir, "g1/g1c01/upright.jpg"), string(withOrientation(plain.Bytes(), 1, "MM")))
	mirrored := filepath.Join(dir, "g2/g2c01/m.jpg")
	writeFile(t, mirrored, string(withOrientation(plain.Bytes(), 2, "MM")))
	plainPath := filepath.Join(t.TempDir(), "plain.jpg")
	writeFile(t, plainPath, plain.String())
	want := make([]uint8, 8*8*3)
	if err := newDecoder(8, 8, 3, false, "nearest").decode(plainPath, want); err != nil {
		t.Fatal(err)
	}
	got := make([]uint8, 8*8*3)
	if err := newDecoder(8, 8, 3, false, "nearest").decode(rotated, got); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the rotated JPEG decodes to other pixels than the plain one (%v)", err)
	}
	c := config(t, dir, "    ways: 3\n    splits: {train: [g1, g2], test: [g3]}")
	var out bytes.Buffer
	if err := (Family{}).DataCheck(c, "", &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"2 JPEG(s) carry an EXIF orientation other than upright",
		rotated + " (6: rotated 90 degrees clockwise to view)",
		mirrored + " (2: mirrored left to right to view)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
}
