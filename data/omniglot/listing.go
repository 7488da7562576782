package omniglot

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
