// Package display is how reports, figures and progress lines name what
// package metalearn computes: a metric's label, unit and displayed scale
// (Score), and a method's name in tables and legends and the symbol of its
// swept setting. metalearn keeps the algorithms; this is their vocabulary.
package display

import (
	"strings"
	"sync"

	"github.com/trmaml/trmaml/metalearn"
)

// Score is a metric with how it is shown.
type Score struct {
	metalearn.Metric
	// Label names the metric in tables and on axes: "MSE", "accuracy".
	Label string
	// Unit is appended to displayed values' labels: "" or "%".
	Unit string
	// Scale converts a stored value to its displayed value: accuracy is
	// stored as a fraction and shown in percent (100).
	Scale float64
}

// scores are how the known metrics are shown.
var scores = map[string]Score{
	metalearn.MSE.Name:      {Metric: metalearn.MSE, Label: "MSE", Scale: 1},
	metalearn.Accuracy.Name: {Metric: metalearn.Accuracy, Label: "accuracy", Unit: "%", Scale: 100},
}

// Of is how m is shown; a metric without a label of its own is shown under
// its name, unscaled.
func Of(m metalearn.Metric) Score {
	if s, ok := scores[m.Name]; ok {
		return s
	}
	return Score{Metric: m, Label: m.Name, Scale: 1}
}

// Show converts a stored value to the value displayed (Scale times it).
func (s Score) Show(v float64) float64 { return s.Scale * v }

// Axis labels the metric of a kind of object with its unit, e.g.
// Axis("task") is "task MSE" or "task accuracy (%)".
func (s Score) Axis(of string) string {
	a := strings.TrimSpace(of + " " + s.Label)
	if s.Unit != "" {
		a += " (" + s.Unit + ")"
	}
	return a
}

// MethodName is how tables and legends name a method (a
// metalearn.MethodInfo.Name) and write its swept setting
// (metalearn.MethodInfo.Swept).
type MethodName struct {
	// Display is the method's name, e.g. "TR-MAML".
	Display string
	// Symbol writes the swept setting, e.g. "a" for CVaR's level ("CVaR
	// a=0.5"); "" writes the setting's key.
	Symbol string
}

var (
	mu      sync.RWMutex
	methods = map[string]MethodName{
		"maml":            {Display: "MAML"},
		"trmaml":          {Display: "TR-MAML"},
		"trmaml_entropic": {Display: "entropic TR-MAML"},
		"cvar":            {Display: "CVaR", Symbol: "a"},
		"dromaml":         {Display: "DRO-MAML"},
		"drmaml":          {Display: "DR-MAML", Symbol: "alpha"},
		"drmaml_plus":     {Display: "DR-MAML+", Symbol: "alpha"},
	}
)

// NameMethod sets how reports name a method registered outside metalearn
// (call it beside metalearn.RegisterMethod).
func NameMethod(name string, n MethodName) {
	mu.Lock()
	defer mu.Unlock()
	methods[name] = n
}

// Method is the display name of the method called name; a method without
// one is shown under name.
func Method(name string) string {
	mu.RLock()
	defer mu.RUnlock()
	if n, ok := methods[name]; ok && n.Display != "" {
		return n.Display
	}
	return name
}

// SweptSymbol is how reports write the setting the method called name
// sweeps: its Symbol, else the setting's key; "" for a method that sweeps
// none or is not registered.
func SweptSymbol(name string) string {
	info, ok := metalearn.LookupMethod(name)
	if !ok || info.Swept == "" {
		return ""
	}
	mu.RLock()
	defer mu.RUnlock()
	if n := methods[name]; n.Symbol != "" {
		return n.Symbol
	}
	return info.Swept
}
