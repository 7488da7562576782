// Package configs defines the experiment configuration: its schema, its
// defaults (the paper's sine K=5 MAML setting), strict loading from YAML with
// errors that name file, line and field, validation, and the built-in
// experiment files embedded in the binary.
package configs
