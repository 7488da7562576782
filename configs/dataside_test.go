package configs_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trmaml/trmaml/configs"
)

// stubSide is a data side for the registry's tests.
type stubSide struct{ sets *configs.TaskSets }

func (s stubSide) Tasks(configs.Config, configs.Env) (*configs.TaskSets, error) { return s.sets, nil }

// registrations makes each run's family name new: the registry keeps
// what a previous run (go test -count) registered.
var registrations atomic.Int64

// TestDataSideRegistry: a registered data side is found by its family's
// name, an unregistered one is an error naming the package to import, and
// a second registration of a name panics.
func TestDataSideRegistry(t *testing.T) {
	name := fmt.Sprint("dataside_test", registrations.Add(1))
	want := &configs.TaskSets{Support: 7}
	configs.RegisterDataSide(name, stubSide{want})
	d, err := configs.DataSideOf(name, "example.com/side")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Tasks(configs.Config{}, configs.Env{}); got != want {
		t.Errorf("Tasks = %v, want the registered side's %v", got, want)
	}
	_, err = configs.DataSideOf("dataside_missing", "example.com/missing")
	if err == nil || !strings.Contains(err.Error(), `task family "dataside_missing" has no data side: import example.com/missing`) {
		t.Errorf("unregistered side: err = %v", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `"`+name+`" registered twice`) {
			t.Errorf("second registration: recovered %v, want a panic naming the family", r)
		}
	}()
	configs.RegisterDataSide(name, stubSide{})
}
