package run

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/trmaml/trmaml/metalearn"
)

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
