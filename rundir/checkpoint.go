package rundir

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"

	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/metalearn"
)

// Checkpoint is checkpoint.json: the training state after an evaluation,
// or, when a run was interrupted, at the iteration it stopped at, with
// Pending. The optimizer is kept raw: its concrete type comes from the config.
// SHA256 is the hash of the file's JSON without it, so a damaged or edited
// checkpoint (a changed weight, a zeroed p) is refused instead of resuming
// silently into a different result; a checkpoint without it is refused too.
// Seed and ConfigSHA256 bind it to its run (the seed and the hash of
// config.yaml it was written under), so that another run's or seed's
// checkpoint is refused; Previous is the SHA-256 of the checkpoint file it
// replaced, which lets Verify accept it when a kill came between it and the
// manifest.
type Checkpoint struct {
	State     metalearn.State `json:"state"`
	Optimizer json.RawMessage `json:"optimizer"`
	// OptimizerState, when set, is written as the optimizer field instead
	// of Optimizer, encoded while the file is written rather than before:
	// Adam's moments are most of a checkpoint. Decoding fills Optimizer.
	OptimizerState any     `json:"-"`
	TrainSeconds   float64 `json:"train_seconds"`
	EvalSeconds    float64 `json:"eval_seconds"`
	// CPU is the processor time so far; nil where it is unknown (the
	// platform could not measure it), and then the run's total is too.
	CPU *CPUTime `json:"cpu,omitempty"`
	// Kernels are the arithmetic kernel sets (graph.Kernels) that trained
	// the run so far: the first, then each one a resume changed to; absent
	// in checkpoints written before they were recorded.
	Kernels      []string `json:"kernels,omitempty"`
	Pending      *Pending `json:"pending,omitempty"`
	Seed         uint64   `json:"seed,omitempty"`
	ConfigSHA256 string   `json:"config_sha256,omitempty"`
	// MetricsSHA256 and PSHA256 bind metrics.csv and p.csv to the
	// checkpoint: the SHA-256 of each file's bytes through the row of its
	// last evaluation (bind.go); absent in checkpoints written before.
	MetricsSHA256 string `json:"metrics_sha256,omitempty"`
	PSHA256       string `json:"p_sha256,omitempty"`
	// TasksSHA256 binds tasks.csv likewise; absent in the checkpoints of
	// runs without one (started before the file existed).
	TasksSHA256 string `json:"tasks_sha256,omitempty"`
	// ValidationSHA256 and BestValSHA256 bind validation.csv (its bytes
	// through the row of the last evaluation) and model_best_val.json (all
	// its bytes) of a family with meta-validation tasks; absent without
	// them.
	ValidationSHA256 string `json:"validation_sha256,omitempty"`
	BestValSHA256    string `json:"best_val_sha256,omitempty"`
	Previous         string `json:"previous_sha256,omitempty"`
	SHA256           string `json:"sha256,omitempty"`
}

// Pending is the training since the last evaluation of a checkpoint taken
// between evaluations: the iteration of the last metrics row, and the batch
// losses accumulated since, which the next row averages. A resumed run
// restores them, so it writes the rows an uninterrupted one would.
type Pending struct {
	Evaluated int     `json:"evaluated"`
	BatchSum  float64 `json:"batch_sum"`
	BatchMax  float64 `json:"batch_max"`
	BatchN    int     `json:"batch_n"`
}

// LastRow is the iteration of the checkpoint's last metrics row (its own,
// without Pending); it checks that the pending batches are the iterations
// since that row.
func (ck Checkpoint) LastRow() (int, error) {
	p := ck.Pending
	if p == nil {
		return ck.State.Iteration, nil
	}
	if p.Evaluated < 0 || p.Evaluated > ck.State.Iteration || p.BatchN != ck.State.Iteration-p.Evaluated {
		return 0, fmt.Errorf("pending: evaluated %d and batch_n %d do not fit iteration %d", p.Evaluated, p.BatchN, ck.State.Iteration)
	}
	return p.Evaluated, nil
}

// contentHash is the hex SHA-256 of ck's JSON without its SHA256 field.
func (ck Checkpoint) contentHash() (string, error) {
	return writeContent(io.Discard, ck)
}

// writeContent writes ck's JSON without its SHA256 field to w, all but the
// closing brace, and returns the hex SHA-256 of that JSON (brace included).
// The JSON is json.Marshal's, streamed (streamJSON): a checkpoint's weights
// and optimizer state make it megabytes, which are never held in memory.
func writeContent(w io.Writer, ck Checkpoint) (string, error) {
	ck.SHA256 = ""
	h := sha256.New()
	t := &tailWriter{w: io.MultiWriter(w, h)}
	bw := bufio.NewWriterSize(t, 64<<10)
	var replace map[string]any
	if ck.OptimizerState != nil {
		if v := reflect.ValueOf(ck.OptimizerState); v.Kind() == reflect.Pointer && v.IsNil() {
			return "", errors.New("checkpoint: nil optimizer state") // written as null, refused on reading
		}
		replace = map[string]any{"optimizer": ck.OptimizerState}
	}
	err := streamStruct(bw, reflect.ValueOf(ck), replace)
	if err == nil {
		bw.WriteByte('\n') // so that the tail is the brace and this
		err = bw.Flush()
	}
	if err != nil {
		return "", err
	}
	if string(t.tail) != "}\n" {
		return "", fmt.Errorf("checkpoint JSON ends in %q", t.tail)
	}
	h.Write(t.tail[:1])
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeCheckpoint writes ck's JSON with its hash to w: SHA256 is the last
// field, so it is the content's JSON with the hash added before the brace.
func writeCheckpoint(w io.Writer, ck Checkpoint) error {
	sum, err := writeContent(w, ck)
	if err == nil {
		_, err = io.WriteString(w, `,"sha256":"`+sum+`"}`)
	}
	return err
}

// tailWriter writes to w all but the last two bytes written to it, which
// it keeps in tail.
type tailWriter struct {
	w    io.Writer
	tail []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	if len(p) >= 2 {
		if _, err := t.w.Write(t.tail); err != nil {
			return 0, err
		}
		if _, err := t.w.Write(p[:len(p)-2]); err != nil {
			return 0, err
		}
		t.tail = append(t.tail[:0], p[len(p)-2:]...)
		return len(p), nil
	}
	t.tail = append(t.tail, p...)
	if extra := len(t.tail) - 2; extra > 0 {
		if _, err := t.w.Write(t.tail[:extra]); err != nil {
			return 0, err
		}
		t.tail = append(t.tail[:0], t.tail[extra:]...)
	}
	return len(p), nil
}

// encodeCheckpoint returns the JSON of ck with its hash.
func encodeCheckpoint(ck Checkpoint) ([]byte, error) {
	var b bytes.Buffer
	if err := writeCheckpoint(&b, ck); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteCheckpoint writes the JSON of ck with its hash to path (replacing
// it atomically) and returns the file's SHA-256. Unlike encodeCheckpoint,
// it holds no copy of the JSON beside the encoder's buffer.
func WriteCheckpoint(path string, ck Checkpoint) (string, error) {
	h := sha256.New()
	err := atomicfile.WriteFunc(path, func(w io.Writer) error {
		return writeCheckpoint(io.MultiWriter(w, h), ck)
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// DecodeCheckpoint reads checkpoint JSON strictly (no unknown fields, no
// trailing data) and verifies its hash and that it names its run; errors
// start with name.
func DecodeCheckpoint(name string, raw []byte) (Checkpoint, error) {
	var ck Checkpoint
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ck); err != nil {
		return Checkpoint{}, fmt.Errorf("%s: %w (the checkpoint is damaged)", name, err)
	}
	if dec.More() {
		return Checkpoint{}, fmt.Errorf("%s: data after the checkpoint's JSON object (the checkpoint is damaged)", name)
	}
	var probe struct {
		SHA256 *string `json:"sha256"`
	}
	json.Unmarshal(raw, &probe) // raw decoded above, so this cannot fail
	switch {
	case probe.SHA256 == nil:
		return Checkpoint{}, fmt.Errorf("%s: sha256: missing: a checkpoint without its hash cannot be verified and is not resumed: restore the run from a copy, or start it again with trmaml train", name)
	case probe.SHA256 != nil:
		h, err := ck.contentHash()
		if err != nil {
			return Checkpoint{}, fmt.Errorf("%s: %w", name, err)
		}
		if h != ck.SHA256 {
			return Checkpoint{}, fmt.Errorf("%s: sha256: does not match the content (the file was changed or damaged after it was written); refusing to resume from it", name)
		}
	}
	if ck.ConfigSHA256 == "" {
		return Checkpoint{}, fmt.Errorf("%s: config_sha256: missing: the checkpoint does not name its run", name)
	}
	if len(ck.Optimizer) == 0 || bytes.Equal(ck.Optimizer, []byte("null")) {
		return Checkpoint{}, fmt.Errorf("%s: optimizer: missing", name)
	}
	return ck, nil
}

// ReadCheckpoint reads and verifies the checkpoint file at path.
func ReadCheckpoint(path string) (Checkpoint, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Checkpoint{}, err
	}
	return DecodeCheckpoint(path, raw)
}
