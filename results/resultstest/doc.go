// Package resultstest writes small synthetic run directories, in the format
// of trmaml train, for the tests of the packages that read them.
package resultstest
