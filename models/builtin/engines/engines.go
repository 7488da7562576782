// Package engines registers the built-in models with their graphs (package
// models): what a program that trains imports.
package engines

import (
	_ "github.com/trmaml/trmaml/models/conv4/engine" // MAML's four-block CNN
	_ "github.com/trmaml/trmaml/models/mlp/engine"   // the fully connected network
)
