package data

import (
	"fmt"
	"os"
	"path/filepath"
)

// Verify checks the data root completely: both sets present, counts per set,
// every entry readable, and the content SHA-256 (per set and the published
// total).
func Verify(root string) error {
	_, _, err := openChecked(root, sets, ContentSHA256)
	return err
}

// Describe reads the two sets of an Omniglot-format data root (same
// layout, any alphabets and counts) and returns their Release, the content
// Load then accepts through Options.Release. It checks the layout and that
// every PNG is readable, not the content: describe only data you trust.
func Describe(root string) (Release, error) {
	dir := filepath.Join(root, Dir)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return Release{}, missingError(root, fmt.Sprintf("%s does not exist", dir))
	}
	var srcs []*source
	var content [2]SetContent
	for i, s := range sets {
		src, err := openSource(dir, set{name: s.name})
		if err != nil {
			return Release{}, dataError(root, err)
		}
		content[i].Characters, content[i].Images = src.counts()
		srcs = append(srcs, src)
	}
	all, perSet, err := contentSums(srcs)
	if err != nil {
		return Release{}, dataError(root, err)
	}
	content[0].SHA256, content[1].SHA256 = perSet[0], perSet[1]
	return Release{Background: content[0], Evaluation: content[1], ContentSHA256: all}, nil
}

// List reads the alphabets of the data root with their character and image
// counts and split, without decoding images or checking the content.
func List(root string) ([]Alphabet, error) {
	dir := filepath.Join(root, Dir)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, missingError(root, fmt.Sprintf("%s does not exist", dir))
	}
	var out []Alphabet
	for _, s := range sets {
		src, err := openSource(dir, s)
		if err != nil {
			return nil, dataError(root, err)
		}
		out = append(out, alphabetsOf(src)...)
	}
	return out, nil
}

// alphabetsOf groups a source's sorted images by alphabet.
func alphabetsOf(src *source) []Alphabet {
	var out []Alphabet
	prevChar := ""
	for _, im := range src.images {
		if len(out) == 0 || out[len(out)-1].Name != im.alphabet {
			out = append(out, Alphabet{Name: im.alphabet, Set: src.set.name, Split: splitOf(src.set.name, im.alphabet)})
			prevChar = ""
		}
		a := &out[len(out)-1]
		if im.character != prevChar {
			a.Characters++
			prevChar = im.character
		}
		a.Images++
	}
	return out
}
