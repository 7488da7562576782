package run

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	"github.com/trmaml/trmaml/metalearn"
)

// checkpoint is checkpoint.json: the training state after an evaluation.
// The optimizer is kept raw: its concrete type comes from the config.
// SHA256 is the hash of the file's JSON without it, so a damaged or edited
// checkpoint (a changed weight, a zeroed p) is refused instead of resuming
// silently into a different result. Checkpoints from before the hash
// existed lack the key and are checked only structurally.
type checkpoint struct {
	State        metalearn.State `json:"state"`
	Optimizer    json.RawMessage `json:"optimizer"`
	TrainSeconds float64         `json:"train_seconds"`
	EvalSeconds  float64         `json:"eval_seconds"`
	SHA256       string          `json:"sha256,omitempty"`
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
