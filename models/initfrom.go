package models

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/safetensors"
)

// InitFrom returns the initialisation of c's init.from: the parameters of
// model m, built from c, read from the safetensors file, checked tensor by tensor against
// the names and shapes the model exports (configs.Exporter). The model's
// layout is found by exporting the parameter indices themselves, so every
// model with named tensors imports without code of its own.
func InitFrom(cfg configs.Config, io configs.IO, m Built) (func(*rand.Rand) ([]float64, error), error) {
	path, modelParams := cfg.Init.From, 0
	for _, sh := range m.Net.ParamShapes() {
		modelParams += sh.TotalSize()
	}
	model, err := configs.ModelNamed(cfg.Model.Kind)
	if err != nil {
		return nil, err
	}
	ex, ok := model.(configs.Exporter)
	if !ok {
		return nil, &configs.ConfigError{Field: "init.from", Problem: fmt.Sprintf("model %q has no named tensors to read", cfg.Model.Kind)}
	}
	idx := make([]float64, modelParams)
	for i := range idx {
		idx[i] = float64(i)
	}
	want, err := ex.Tensors(cfg, io, idx)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, &configs.ConfigError{Field: "init.from", Problem: err.Error()}
	}
	got, _, err := safetensors.Decode(path, raw)
	if err != nil {
		return nil, &configs.ConfigError{Field: "init.from", Problem: err.Error()}
	}
	byName := map[string]safetensors.Tensor{}
	for _, t := range got {
		byName[t.Name] = t
	}
	w := make([]float64, modelParams)
	for _, t := range want {
		g, ok := byName[t.Name]
		if !ok {
			return nil, &configs.ConfigError{Field: "init.from", Problem: fmt.Sprintf("%s has no tensor %s (model %s)", path, t.Name, cfg.Model.Kind)}
		}
		if fmt.Sprint(g.Shape) != fmt.Sprint(t.Shape) {
			return nil, &configs.ConfigError{Field: "init.from", Problem: fmt.Sprintf("%s: tensor %s has shape %v, the model's is %v", path, t.Name, g.Shape, t.Shape)}
		}
		for j, at := range t.Data {
			w[int(at)] = float64(g.Data[j])
		}
		delete(byName, t.Name)
	}
	if extra := slices.Sorted(maps.Keys(byName)); len(extra) > 0 {
		return nil, &configs.ConfigError{Field: "init.from", Problem: fmt.Sprintf("%s: tensor %s is not the model's (model %s)", path, extra[0], cfg.Model.Kind)}
	}
	return func(rng *rand.Rand) ([]float64, error) {
		w0, err := m.Init(rng) // draws as a fresh run would, then replaces them
		if err != nil {
			return nil, err
		}
		copy(w0, w)
		return w0, nil
	}, nil
}
