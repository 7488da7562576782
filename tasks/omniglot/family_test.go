package omniglot_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/tasks/omniglot"

	_ "github.com/trmaml/trmaml/tasks" // the built-in task families, without their data sides
)

// TestWithoutDataSide: a program that links the family but not its data
// side (a reader of run directories) gets an error naming the package to
// import, from both Tasks and DataCommand, and no image decoding.
func TestWithoutDataSide(t *testing.T) {
	c := configs.Defaults()
	want := `task family "omniglot" has no data side: import ` + omniglot.DataPackage
	if _, err := (omniglot.Family{}).Tasks(c, configs.Env{}); err == nil || err.Error() != want {
		t.Errorf("Tasks: err = %v, want %q", err, want)
	}
	err := omniglot.Family{}.DataCommand(context.Background(), []string{"-info"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("DataCommand: err = %v, want %q", err, want)
	}
}
