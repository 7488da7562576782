package main

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEShowsThisProgram checks that the README's Go example is this
// program, so that the code a reader copies compiles and runs.
func TestREADMEShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "\n```go\n")
	block, _, closed := strings.Cut(block, "\n```\n")
	if !ok || !closed {
		t.Fatal("README.md has no ```go block")
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	// The README shows the program from its package clause on.
	_, body, _ := strings.Cut(string(src), "package main\n")
	if want := "package main\n" + strings.TrimSuffix(body, "\n"); block != want {
		t.Errorf("README.md's Go example differs from examples/quickstart/main.go:\n--- README\n%s\n--- main.go\n%s", block, want)
	}
}
