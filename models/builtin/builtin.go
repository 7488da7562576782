// Package builtin registers the config side of the built-in models by
// importing them: mlp (the sinusoid and linear-regression families'
// network) and conv4 (the Omniglot network). It links no engine; package
// builtin/engines adds their graphs.
package builtin

import (
	_ "github.com/trmaml/trmaml/models/conv4" // MAML's four-block CNN
	_ "github.com/trmaml/trmaml/models/mlp"   // the fully connected network
)
