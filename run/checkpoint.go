package run

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trmaml/trmaml/metalearn"
)

// checkpoint is checkpoint.json: the training state after an evaluation,
// or, when a run was interrupted (ErrInterrupted), at the iteration it
// stopped at, with Pending. The optimizer is kept raw: its concrete type comes from the config.
// SHA256 is the hash of the file's JSON without it, so a damaged or edited
// checkpoint (a changed weight, a zeroed p) is refused instead of resuming
// silently into a different result. Checkpoints from before the hash
// existed lack the key and are checked only structurally.
type checkpoint struct {
	State        metalearn.State `json:"state"`
	Optimizer    json.RawMessage `json:"optimizer"`
	TrainSeconds float64         `json:"train_seconds"`
	EvalSeconds  float64         `json:"eval_seconds"`
	Pending      *pending        `json:"pending,omitempty"`
	SHA256       string          `json:"sha256,omitempty"`
}

// pending is the training since the last evaluation of a checkpoint taken
// between evaluations: the iteration of the last metrics row, and the batch
// losses accumulated since, which the next row averages. Resume restores
// them, so the resumed run writes the rows an uninterrupted one would.
type pending struct {
	Evaluated int     `json:"evaluated"`
	BatchSum  float64 `json:"batch_sum"`
	BatchMax  float64 `json:"batch_max"`
	BatchN    int     `json:"batch_n"`
}

// lastRow is the iteration of the checkpoint's last metrics row; it checks
// that the pending batches are the iterations since that row.
func (ck checkpoint) lastRow() (int, error) {
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
func (ck checkpoint) contentHash() (string, error) {
	ck.SHA256 = ""
	b, err := json.Marshal(ck)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// encodeCheckpoint returns the JSON of ck with its hash.
func encodeCheckpoint(ck checkpoint) ([]byte, error) {
	h, err := ck.contentHash()
	if err != nil {
		return nil, err
	}
	ck.SHA256 = h
	return json.Marshal(ck)
}

// decodeCheckpoint reads checkpoint JSON strictly (no unknown fields, no
// trailing data) and verifies its hash; errors start with name.
func decodeCheckpoint(name string, raw []byte) (checkpoint, error) {
	var ck checkpoint
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ck); err != nil {
		return checkpoint{}, fmt.Errorf("%s: %w", name, err)
	}
	if dec.More() {
		return checkpoint{}, fmt.Errorf("%s: data after the checkpoint's JSON object", name)
	}
	// A checkpoint written before checkpoints carried a hash has no sha256
	// key at all; it is accepted, and checked only structurally (Restore).
	var probe struct {
		SHA256 *string `json:"sha256"`
	}
	json.Unmarshal(raw, &probe) // raw decoded above, so this cannot fail
	if probe.SHA256 != nil {
		h, err := ck.contentHash()
		if err != nil {
			return checkpoint{}, fmt.Errorf("%s: %w", name, err)
		}
		if h != ck.SHA256 {
			return checkpoint{}, fmt.Errorf("%s: sha256: does not match the content (the file was changed or damaged after it was written); refusing to resume from it", name)
		}
	}
	if len(ck.Optimizer) == 0 || bytes.Equal(ck.Optimizer, []byte("null")) {
		return checkpoint{}, fmt.Errorf("%s: optimizer: missing", name)
	}
	return ck, nil
}

// readCheckpoint reads and verifies the checkpoint file at path.
func readCheckpoint(path string) (checkpoint, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return checkpoint{}, err
	}
	return decodeCheckpoint(path, raw)
}

// restoreOptimizer decodes a checkpoint's optimizer state into opt, the
// optimizer the config builds, refusing hyperparameters that differ from
// the config's (a checkpoint of another config) and fields of another
// optimizer.
func restoreOptimizer(opt metalearn.Optimizer, raw json.RawMessage) error {
	want, err := json.Marshal(hyperparameters(opt))
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(opt); err != nil {
		return fmt.Errorf("optimizer: %w (was meta.optimizer changed?)", err)
	}
	got, err := json.Marshal(hyperparameters(opt))
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("optimizer: hyperparameters %s, the config gives %s (was meta.lr or meta.optimizer changed?)", got, want)
	}
	return nil
}

// hyperparameters returns the settings of opt that come from the config,
// not from training.
func hyperparameters(opt metalearn.Optimizer) any {
	switch o := opt.(type) {
	case *metalearn.Adam:
		return [4]float64{o.LR, o.Beta1, o.Beta2, o.Epsilon}
	case *metalearn.SGD:
		return o.LR
	}
	return nil
}

var errNoCheckpoint = errors.New("no checkpoint")

// CheckpointIteration is the iteration of the checkpoint in run directory
// dir, read and verified, for status displays; a run without one
// (os.ErrNotExist) has not reached its first.
func CheckpointIteration(dir string) (int, error) {
	ck, err := readCheckpoint(filepath.Join(dir, CheckpointFile))
	if err != nil {
		return 0, err
	}
	return ck.State.Iteration, nil
}
