// Package data is the data side of the Omniglot task family (package
// tasks/omniglot, the paper's image experiment): it finds a data root
// (ResolveRoot), downloads and verifies the published archives (Download,
// Verify), decodes and resizes every image once into a cache keyed by the
// content and the resize settings (Load), and makes a Split of alphabets
// into a metalearn.TaskSet of N-way K-shot instances over the characters of
// one alphabet (NewTaskSet). Importing it registers the family's
// configs.DataSide (its task sets and "trmaml data omniglot"); package run
// imports it, the readers of run directories need not.
package data
