package configs

import "fmt"

// DataSide is the half of a task family that reads its data, for a family
// whose reading links what configs and the readers of run directories must
// not (image decoders, archives, a downloader): the family's package
// registers its Family, a subpackage registers its DataSide with
// RegisterDataSide, and only programs that train or fetch data import that
// subpackage (package run links the built-in ones). The Family's Tasks and
// DataCommand then reach it through DataSideOf. A DataSide that fetches
// its data implements DataCommander too.
type DataSide interface {
	// Tasks builds the task sets of c, as Family.Tasks.
	Tasks(c Config, env Env) (*TaskSets, error)
}

// dataSides holds the registered data sides by family name.
var dataSides = map[string]DataSide{}

// RegisterDataSide adds the data side of the family called name (call it
// from the data package's init function). It panics on a name registered
// twice: a programming error.
func RegisterDataSide(name string, d DataSide) {
	if _, ok := dataSides[name]; ok {
		panic(fmt.Sprintf("configs: data side of task family %q registered twice", name))
	}
	dataSides[name] = d
}

// DataSideOf returns the registered data side of the family called name, or
// an error naming pkg, the package that registers it, when the program
// does not link it.
func DataSideOf(name, pkg string) (DataSide, error) {
	if d, ok := dataSides[name]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("task family %q has no data side: import %s", name, pkg)
}
