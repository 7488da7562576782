package configs

import "fmt"

// Families lists the allowed values of task.family.
var Families = []string{"sinusoid", "omniglot"}

// Bounds of the Omniglot fields.
const (
	// MaxWays is the characters of the smallest alphabet of a split (the
	// meta-test alphabet Angelic has 20): an N-way instance needs N distinct
	// characters of one alphabet.
	MaxWays = 20
	// MaxFilters bounds model.cnn.filters (paper: 64).
	MaxFilters = 1024
	// MaxImageSize bounds task.omniglot.image_size (paper: 28; the drawings
	// are 105x105).
	MaxImageSize = 105
	// PaperFinalInstances is the paper's evaluation: 5,000 instances per
	// split, what eval.final_instances defaults to for omniglot.
	PaperFinalInstances = 5000
)

// omniglot checks the fields of the omniglot family: the instance sizes
// against the data (N distinct characters of an alphabet, K + J distinct
// drawings of a character) and the CNN against the image size.
func (k *checker) omniglot(c Config) {
	o, t := c.Task.Omniglot, c.Task
	if o.Ways < 2 || o.Ways > MaxWays {
		k.fail("task.omniglot.ways", o.Ways, "must be in [2, %d]: the smallest alphabet of a split (Angelic, meta-test) has %d characters", MaxWays, MaxWays)
	}
	if t.Support+t.Query > MaxDrawings {
		k.fail("task.query", t.Query, "must be <= %d with task.support = %d: a character has %d drawings for its support and query images",
			MaxDrawings-t.Support, t.Support, MaxDrawings)
	}
	if t.Support+c.Eval.Query > MaxDrawings {
		k.fail("eval.query", c.Eval.Query, "must be <= %d with task.support = %d: a character has %d drawings for its support and query images (for omniglot eval.query counts query images per class)",
			MaxDrawings-t.Support, t.Support, MaxDrawings)
	}
	k.between("task.omniglot.image_size", o.ImageSize, 1, MaxImageSize)
	k.oneOf("task.omniglot.resize", o.Resize, OmniglotResizes...)
	n := c.Model.CNN
	k.between("model.cnn.filters", n.Filters, 1, MaxFilters)
	if o.ImageSize >= 1 && (n.Blocks < 1 || o.ImageSize>>min(n.Blocks, 62) < 1) {
		k.fail("model.cnn.blocks", n.Blocks, "must be >= 1 and leave images of at least 1x1: each block halves the side, so at most %d for task.omniglot.image_size = %d",
			log2(o.ImageSize), o.ImageSize)
	}
}

// log2 is floor(log2(n)) for n >= 1.
func log2(n int) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l
}

// paperOmniglotPLR is eta_p of TR-MAML on Omniglot in Algorithm 1's
// convention, per number of ways: the authors' p step sizes (2e-5 at 5-way,
// 1.6e-5 at 10-way, 1e-5 at 20-way) add p_lr times each sampled task's loss
// without the n/C factor of g_p, so eta_p = p_lr * C / n with their
// meta-batch C = 8 and n = 25 meta-training alphabets.
var paperOmniglotPLR = map[int]float64{5: 2e-5 * 8 / 25, 10: 1.6e-5 * 8 / 25, 20: 1e-5 * 8 / 25}

// deriveOmniglot fills the defaults of an omniglot file that differ from the
// sinusoid's or follow other fields: task.omniglot.rotate_eval is
// task.omniglot.rotate, eval.query is task.query (query images per class;
// the sinusoid's 1000 held-out points do not exist), eval.final_instances
// the paper's 5,000, and trmaml.p_lr the paper's value for the file's ways.
// set holds the field paths the file states.
func (c *Config) deriveOmniglot(stated func(string) bool) []error {
	if !stated("task.omniglot.rotate_eval") {
		c.Task.Omniglot.RotateEval = c.Task.Omniglot.Rotate
	}
	if !stated("eval.query") {
		c.Eval.Query = c.Task.Query
	}
	if !stated("eval.final_instances") {
		c.Eval.FinalInstances = PaperFinalInstances
	}
	if stated("trmaml.p_lr") {
		return nil
	}
	v, ok := paperOmniglotPLR[c.Task.Omniglot.Ways]
	if !ok {
		return []error{&fieldError{"trmaml.p_lr", "(not set)", fmt.Sprintf(
			"must be stated for task.omniglot.ways = %d: the paper gives eta_p only for 5, 10 and 20 ways (6.4e-6, 5.12e-6, 3.2e-6); "+
				"experiment grids can turn any config into a TR-MAML run", c.Task.Omniglot.Ways)}}
	}
	c.TRMAML.PLR = v
	return nil
}
