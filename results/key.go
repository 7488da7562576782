package results

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/results/display"
)

// Key identifies the runs that differ only in their seed.
type Key struct {
	// Name is the config name without a trailing "-seedN" or "_seedN".
	Name string
	// Algorithm is a registered method's name; Order is "second" or
	// "first".
	Algorithm, Order string
	// Level is the value of the setting the method sweeps (CVaR's level a;
	// metalearn.MethodInfo.Swept), 0 for methods that sweep none.
	Level float64
	// K is the number of support points.
	K int
	// Ways is N of N-way classification (K is then per class); 0 for other
	// task families.
	Ways int
}

// Setting names the few-shot setting of k: "5-shot", or "20-way 1-shot"
// for classification.
func (k Key) Setting() string {
	if k.Ways > 0 {
		return fmt.Sprintf("%d-way %d-shot", k.Ways, k.K)
	}
	return fmt.Sprintf("%d-shot", k.K)
}

// Shots names the few-shot setting of k compactly, as in a legend or a
// description: "K=5", or "20-way 1-shot" for classification.
func (k Key) Shots() string {
	if k.Ways > 0 {
		return k.Setting()
	}
	return fmt.Sprintf("K=%d", k.K)
}

// SameSetting reports whether k and o have the same few-shot setting
// (ways and shots).
func (k Key) SameSetting(o Key) bool { return k.K == o.K && k.Ways == o.Ways }

var seedSuffix = regexp.MustCompile(`[-_]seed\d+$`)

// KeyOf returns the group key of r, from its config.
func KeyOf(r *Run) Key {
	c := r.Config
	k := Key{Name: seedSuffix.ReplaceAllString(c.Name, ""), Algorithm: c.Algorithm, Order: c.Order, K: c.Task.Support, Level: c.Swept()}
	if f, err := c.Family(); err == nil {
		k.Ways = f.Ways(c)
	}
	return k
}

// String describes the key, e.g. "sine_k5_maml (maml, second order, K=5)"
// or "omni (trmaml, second order, 5-way 1-shot)".
func (k Key) String() string {
	alg := k.Algorithm
	if k.SweptSymbol() != "" {
		alg += " " + k.SweptSymbol() + "=" + strconv.FormatFloat(k.Level, 'g', -1, 64)
	}
	return fmt.Sprintf("%s (%s, %s order, %s)", k.Name, alg, k.Order, k.Shots())
}

// Method is the display name of the key's method: AlgorithmName, with the
// value of the setting it sweeps ("CVaR a=0.5").
func (k Key) Method() string {
	if s := k.SweptSymbol(); s != "" {
		return fmt.Sprintf("%s %s=%s", AlgorithmName(k.Algorithm), s, strconv.FormatFloat(k.Level, 'g', -1, 64))
	}
	return AlgorithmName(k.Algorithm)
}

// SweptSymbol is how reports write the setting the key's method sweeps
// (display.SweptSymbol, "a" for CVaR's level); "" for none.
func (k Key) SweptSymbol() string { return display.SweptSymbol(k.Algorithm) }

// AlgorithmName is the display name of a method (display.Method), e.g.
// "TR-MAML"; other values are returned unchanged.
func AlgorithmName(alg string) string { return display.Method(alg) }

// MovesP reports whether the key's method moves the task distribution p
// (every registered method but those with a fixed p, such as MAML).
func (k Key) MovesP() bool {
	info, ok := metalearn.LookupMethod(k.Algorithm)
	return ok && !info.FixedP
}
