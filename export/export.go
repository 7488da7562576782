// Package export writes a trained run's model in formats other programs
// read: Formats maps each -format of "trmaml export" to its writer.
package export

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/rundir"
	"github.com/trmaml/trmaml/safetensors"
)

// Formats maps a format name to the function that exports the finished
// run in dir and returns the path it wrote.
var Formats = map[string]func(dir string) (string, error){
	"safetensors": Safetensors,
}

// FormatNames lists the formats, sorted.
func FormatNames() []string {
	names := make([]string, 0, len(Formats))
	for n := range Formats {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// SafetensorsFile is the file Safetensors writes in the run directory.
const SafetensorsFile = "model.safetensors"

// Safetensors writes the solution of the finished run in dir as
// model.safetensors there: the model's named tensors with PyTorch's names
// and layouts (configs.Exporter), in float32, and as metadata the model's
// kind, its section of config.yaml and the family's points. The run's
// sealed files are not changed.
func Safetensors(dir string) (string, error) {
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
	out := make([]safetensors.Tensor, len(tensors))
	for i, t := range tensors {
		data := make([]float32, len(t.Data))
		for j, v := range t.Data {
			data[j] = float32(v)
		}
		out[i] = safetensors.Tensor{Name: t.Name, Shape: t.Shape, Data: data}
	}
	yml, err := cfg.Marshal()
	if err != nil {
		return "", err
	}
	raw, err := safetensors.Encode(out, map[string]string{
		"kind":  cfg.Model.Kind,
		"model": modelSection(string(yml)),
		"io":    fmt.Sprintf("%d %d %d %d %v", io.Height, io.Width, io.Channels, io.Outputs, io.Classes),
	})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, SafetensorsFile)
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

// ErrFormat is returned (wrapped) for an unknown -format.
var ErrFormat = errors.New("unknown export format")

// Run exports the run in dir in format.
func Run(dir, format string) (string, error) {
	f, ok := Formats[format]
	if !ok {
		return "", fmt.Errorf("-format %s: %w (formats: %s)", format, ErrFormat, strings.Join(FormatNames(), ", "))
	}
	if _, err := os.Stat(dir); err != nil {
		return "", err
	}
	return f(dir)
}
