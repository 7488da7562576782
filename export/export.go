// Package export writes a trained run's model in formats other programs
// read ("trmaml export -format safetensors").
package export

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/rundir"
	"github.com/trmaml/trmaml/safetensors"
)

// SafetensorsFile is the file Safetensors writes in the run directory.
const SafetensorsFile = "model.safetensors"

// Safetensors writes the solution of the finished run in dir as
// model.safetensors in out (dir if empty): the model's named tensors with PyTorch's names
// and layouts (configs.Exporter), in float32, and as metadata the model's
// kind, its section of config.yaml and the family's points. The run's
// sealed files are not changed, nor a model.safetensors already in out
// that holds another model.
func Safetensors(dir, out string) (string, error) {
	sealed, err := rundir.Verify(dir)
	if err != nil {
		return "", err
	}
	if !sealed.Finished {
		return "", fmt.Errorf("%s is not finished: export needs its %s", dir, rundir.ModelFile)
	}
	cfg := sealed.Config
	model, err := configs.ModelNamed(cfg.Model.Kind)
	if err != nil {
		return "", err
	}
	ex, ok := model.(configs.Exporter)
	if !ok {
		return "", fmt.Errorf("%s: model %q has no named tensors (configs.Exporter)", dir, cfg.Model.Kind)
	}
	io, err := cfg.IO()
	if err != nil {
		return "", err
	}
	m, err := rundir.ReadModel(filepath.Join(dir, rundir.ModelFile))
	if err != nil {
		return "", err
	}
	tensors, err := ex.Tensors(cfg, io, m.W)
	if err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(dir, rundir.ModelFile), err)
	}
	st := make([]safetensors.Tensor, len(tensors))
	for i, t := range tensors {
		data := make([]float32, len(t.Data))
		for j, v := range t.Data {
			data[j] = float32(v)
		}
		st[i] = safetensors.Tensor{Name: t.Name, Shape: t.Shape, Data: data}
	}
	yml, err := cfg.Marshal()
	if err != nil {
		return "", err
	}
	raw, err := safetensors.Encode(st, map[string]string{
		"kind":  cfg.Model.Kind,
		"model": modelSection(string(yml)),
		"io":    fmt.Sprintf("%d %d %d %d %v", io.Height, io.Width, io.Channels, io.Outputs, io.Classes),
	})
	if err != nil {
		return "", err
	}
	if out == "" {
		out = dir
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(out, SafetensorsFile)
	if old, err := os.ReadFile(path); err == nil {
		if bytes.Equal(old, raw) {
			return path, nil // this run's export, already there
		}
		return "", fmt.Errorf("%s already holds another model (another run's, or another file): choose another -out, or remove it yourself", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return path, atomicfile.Write(path, raw)
}

// modelSection is the model: mapping of a marshalled config, as YAML.
func modelSection(yml string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(yml, "\n") {
		switch {
		case line == "model:":
			in = true
		case in && !strings.HasPrefix(line, " "):
			return b.String()
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
