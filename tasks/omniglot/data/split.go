package data

import "fmt"

// Split is one of the paper's three groups of alphabets (Triantafillou et
// al.'s split, as in the TR-MAML paper).
type Split int

const (
	// Train holds the 25 largest background alphabets: the meta-training tasks.
	Train Split = iota
	// Validation holds the 5 smallest background alphabets.
	Validation
	// Test holds the 20 evaluation alphabets: the meta-test tasks.
	Test
)

// Splits lists the splits in order.
var Splits = []Split{Train, Validation, Test}

func (s Split) String() string {
	switch s {
	case Train:
		return "train"
	case Validation:
		return "validation"
	case Test:
		return "test"
	}
	return fmt.Sprintf("Split(%d)", int(s))
}

// ParseSplit reads "train", "validation" or "test".
func ParseSplit(name string) (Split, error) {
	for _, s := range Splits {
		if s.String() == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("unknown Omniglot split %q (allowed: train, validation, test)", name)
}

// validationAlphabets are the 5 smallest background alphabets (14, 14, 16,
// 17 and 20 characters; the next smallest has 22). They are named rather
// than found by size so that the split is the published one by construction.
var validationAlphabets = map[string]bool{
	"Blackfoot_(Canadian_Aboriginal_Syllabics)": true,
	"Ojibwe_(Canadian_Aboriginal_Syllabics)":    true,
	"Inuktitut_(Canadian_Aboriginal_Syllabics)": true,
	"Tagalog":              true,
	"Alphabet_of_the_Magi": true,
}

// splitOf assigns an alphabet of the given set to its split.
func splitOf(setName, alphabet string) Split {
	switch {
	case setName == "images_evaluation":
		return Test
	case validationAlphabets[alphabet]:
		return Validation
	}
	return Train
}
