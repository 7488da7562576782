package rundir

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"

	"github.com/trmaml/trmaml/internal/atomicfile"
)

// The bindings tie a run directory's files to each other without the
// manifest, so that a file of another run, or an edited one, is refused
// even under a manifest recomputed over it (trmaml seal) or edited:
//
//   - checkpoint.json carries the SHA-256 of the config.yaml it was written
//     under and the run's seed (Checkpoint.ConfigSHA256, Seed), and the
//     SHA-256 of metrics.csv's, p.csv's and (where the run records it)
//     tasks.csv's bytes from their start through the row of its last
//     evaluation (MetricsSHA256, PSHA256, TasksSHA256);
//   - for a family with meta-validation tasks, checkpoint.json carries the
//     SHA-256 of validation.csv through its last evaluation's row and of
//     model_best_val.json (ValidationSHA256, BestValSHA256);
//   - model.json and result.json carry the state hash of the checkpoint
//     they were computed from (state_sha256, Checkpoint.StateHash: its
//     JSON without timing, row hashes and links, so that identical runs
//     write identical files) and their own hash (sha256, over the file
//     without that line).
//
// The rows are hashed as written, so the binding does not depend on the
// columns; the JSON files are hashed as written, so fields added to them
// are covered without a change here.

// RowsPrefix returns the length of the CSV content raw from its start
// through the complete line of iteration last ("last,...\n"), and whether
// that line is there: the bytes a checkpoint's row hash covers.
func RowsPrefix(raw []byte, last int) (int, bool) {
	prefix := []byte(strconv.Itoa(last) + ",")
	n := 0
	for line := range bytes.Lines(raw) {
		n += len(line)
		if n > len(line) && bytes.HasPrefix(line, prefix) && bytes.HasSuffix(line, []byte("\n")) {
			return n, true
		}
	}
	return 0, false
}

// BindRows sets the checkpoint's row hashes from the content of
// metrics.csv, p.csv and tasks.csv (nil for a run that does not record
// it) through its last evaluation's row: what the session that writes it
// holds in memory.
func (ck *Checkpoint) BindRows(metrics, p, tasks []byte) {
	ck.MetricsSHA256, ck.PSHA256, ck.TasksSHA256 = HashBytes(metrics), HashBytes(p), ""
	if tasks != nil {
		ck.TasksSHA256 = HashBytes(tasks)
	}
}

// RowFiles are the files whose rows the checkpoint binds: metrics.csv and
// p.csv, and tasks.csv where the run records it.
func (ck Checkpoint) RowFiles() []string {
	if ck.TasksSHA256 != "" {
		return []string{MetricsFile, PFile, TasksFile}
	}
	return []string{MetricsFile, PFile}
}

// BindValidation sets the checkpoint's hashes of validation.csv's content
// through its last evaluation's row and of model_best_val.json (bestSum,
// the hash of its bytes).
func (ck *Checkpoint) BindValidation(rows []byte, bestSum string) {
	ck.ValidationSHA256, ck.BestValSHA256 = HashBytes(rows), bestSum
}

// StateHash is the hex SHA-256 of the checkpoint's training state: its
// JSON without the fields that differ between identical runs (timing, the
// row hashes, which cover metrics.csv's elapsed_seconds, and the links to
// other files, previous_sha256, the validation files' hashes and sha256).
// model.json and result.json carry it (state_sha256).
func (ck Checkpoint) StateHash() (string, error) {
	ck.TrainSeconds, ck.EvalSeconds, ck.CPU = 0, 0, nil
	ck.MetricsSHA256, ck.PSHA256, ck.TasksSHA256, ck.Previous = "", "", "", ""
	ck.ValidationSHA256, ck.BestValSHA256 = "", ""
	return ck.contentHash()
}

// CheckpointStateHash reads and verifies the checkpoint at path and
// returns its StateHash.
func CheckpointStateHash(path string) (string, error) {
	ck, err := ReadCheckpoint(path)
	if err != nil {
		return "", err
	}
	return ck.StateHash()
}

// rowsSum is the row hash of the checkpoint for file name ("" when the
// checkpoint was written before rows were bound).
func (ck Checkpoint) rowsSum(name string) string {
	switch name {
	case MetricsFile:
		return ck.MetricsSHA256
	case TasksFile:
		return ck.TasksSHA256
	}
	return ck.PSHA256
}

// boundKey starts the line WriteBound adds before the closing brace.
const boundKey = ",\n  \"sha256\": \""

// WriteBound writes v (a Model or Result whose StateSHA256 is set) to
// path as WriteJSON does, with its own SHA-256 as the last field: the hash
// of the bytes WriteJSON writes for v, which ReadBinding recomputes by
// removing that field.
func WriteBound(path string, v any) error {
	return atomicfile.WriteFunc(path, func(f io.Writer) error {
		h := sha256.New()
		t := &tailWriter{w: io.MultiWriter(f, h)}
		out := bufio.NewWriterSize(t, 64<<10)
		in := bufio.NewWriter(&indentWriter{w: out})
		if err := streamJSON(in, reflect.ValueOf(v)); err != nil {
			return err
		}
		if err := in.Flush(); err != nil {
			return err
		}
		if err := out.Flush(); err != nil {
			return err
		}
		if string(t.tail) != "\n}" {
			return fmt.Errorf("writing %s: JSON ends in %q, want an object", path, t.tail)
		}
		h.Write([]byte("\n}\n"))
		_, err := io.WriteString(f, boundKey+hex.EncodeToString(h.Sum(nil))+"\"\n}\n")
		return err
	})
}

// Binding is what ReadBinding finds in model.json or result.json.
type Binding struct {
	// Bound is false for a file written before the bindings (no sha256 and
	// no state_sha256): it can be checked against the manifest only.
	Bound bool
	// State is the state hash of the checkpoint it was computed from
	// (Checkpoint.StateHash).
	State string
}

// ReadBinding checks the binding of the model.json or result.json content
// raw (named path in errors): its own hash, and that it names a checkpoint.
func ReadBinding(path string, raw []byte) (Binding, error) {
	var probe struct {
		State  *string `json:"state_sha256"`
		SHA256 *string `json:"sha256"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return Binding{}, fmt.Errorf("%s: %w (the file is damaged: restore it from a copy of the run)", path, err)
	}
	if probe.State == nil && probe.SHA256 == nil {
		return Binding{}, nil
	}
	if probe.SHA256 == nil {
		return Binding{}, fmt.Errorf("%s: sha256: missing, while state_sha256 is there: the file was edited; restore it from a copy of the run", path)
	}
	if probe.State == nil || len(*probe.State) != 64 {
		return Binding{}, fmt.Errorf("%s: state_sha256: missing or not a SHA-256: the file was edited; restore it from a copy of the run", path)
	}
	n := len(boundKey) + 64 + len("\"\n}\n")
	i := len(raw) - n
	if i < 0 || string(raw[i:i+len(boundKey)]) != boundKey || string(raw[len(raw)-4:]) != "\"\n}\n" || string(raw[i+len(boundKey):len(raw)-4]) != *probe.SHA256 {
		return Binding{}, fmt.Errorf("%s: sha256: not the file's last field as trmaml writes it: the file was edited; restore it from a copy of the run", path)
	}
	content := append(bytes.Clone(raw[:i]), "\n}\n"...)
	if HashBytes(content) != *probe.SHA256 {
		return Binding{}, fmt.Errorf("%s: sha256: does not match the content: the file was changed or damaged after it was written; restore it from a copy of the run", path)
	}
	return Binding{Bound: true, State: *probe.State}, nil
}
