package configs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/trmaml/trmaml/internal/regname"
	"github.com/trmaml/trmaml/metalearn"
)

// Family is a task family: where its tasks come from and everything about
// a config that depends on them. A family is one package that registers one
// Family with RegisterFamily (see package tasks for the table of the
// built-in ones); nothing else in the framework knows its name. Its config
// section is task.<Name>, decoded strictly into NewSection's type.
type Family interface {
	// Name is the value of task.family and the key of the family's
	// section under task.
	Name() string
	// NewSection returns the section's defaults: a pointer to a struct
	// whose fields carry yaml tags.
	NewSection() any
	// Noun is what one task is called in captions, headers and on axes,
	// e.g. "task" or "alphabet".
	Noun() string
	// Model is the registered model (model.kind) of a file that states
	// none.
	Model() string
	// IO is what c's points are to a model: the input's height, width and
	// channels, the outputs, and whether they are class scores.
	IO(c Config) IO
	// Ways is N of N-way classification (tables then name the setting
	// "N-way K-shot"), 0 for regression.
	Ways(c Config) int
	// Defaults fills the fields outside the section that the file leaves
	// out and whose default differs for this family; stated reports
	// whether the file sets a field path. It runs before validation.
	Defaults(c *Config, stated func(path string) bool) []error
	// PLR is the family's step size eta_p of TR-MAML at c's instance size
	// (the paper's appendix values), or an error (FieldError for
	// trmaml.p_lr) asking the file to state it.
	PLR(c Config) (float64, error)
	// Check validates the section and the fields whose range depends on
	// the family, with k's helpers.
	Check(c Config, k *Checker)
	// Memory estimates the memory of a run of c that is the family's, from
	// its sizes alone: Records (RecordsMemory) and Data; the model
	// estimates the graphs.
	Memory(c Config) MemoryEstimate
	// Tasks builds the task sets of c. Errors a config could have caused
	// are *ConfigError, naming the field.
	Tasks(c Config, env Env) (*TaskSets, error)
}

// EvalFielder is implemented by a family whose section has fields that an
// evaluation of a trained solution may change (trmaml eval -set): how
// instances are prepared, never what was trained.
type EvalFielder interface {
	// EvalFields lists their paths, e.g. "task.omniglot.resize".
	EvalFields() []string
}

// ScaleFielder is implemented by a family whose section sets the scale of
// the inputs, or a model whose section sets that of the initial weights, so
// that a run whose first evaluation is not finite can name those fields
// beside the learning rates.
type ScaleFielder interface {
	// ScaleFields names the section's fields that set the input scale,
	// with their values, e.g. "task.sinusoid.x_min = -5".
	ScaleFields(c Config) string
}

// DataCommander is implemented by a family whose data is fetched once per
// machine before its runs, with its own download.
type DataCommander interface {
	// DataCommand runs "trmaml data NAME" with the arguments after NAME:
	// it parses its own flags (on -h it prints its usage to stderr and
	// returns flag.ErrHelp), then fetches, checks or describes the data. ctx
	// is done when the user interrupts.
	DataCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// DataReader is implemented by a family whose tasks are read from files
// under the data root (the config's data.root, else the -data flag,
// $TRMAML_DATA or the user cache directory). A config of any other family
// may not state a data root: nothing would read it.
type DataReader interface {
	// ReadsData marks the family as one that reads data.root.
	ReadsData()
}

// DataChecker is implemented by a family that reads a folder of the
// user's data, for "trmaml data check DIR -config FILE".
type DataChecker interface {
	// DataCheck reads the folder dir ("" means the one c names) as c lays
	// it out, without training and without writing into it, and prints to
	// w what it holds per split (counts, sizes) and every problem found;
	// it returns an error when there is one.
	DataCheck(c Config, dir string, w io.Writer) error
}

// DataSizer is implemented by a family whose data in memory depends on the
// files, not only on the config (an image folder's image count), so that
// Family.Memory cannot include it.
type DataSizer interface {
	// DataBytes returns the bytes c's data will hold in memory, from a
	// listing of the files under env's data root, without decoding them.
	DataBytes(c Config, env Env) (float64, error)
}

// TaskNouner is implemented by a family whose config says what its tasks
// are called (an image folder's groups may be categories or superclasses);
// it takes precedence over Family.Noun for that config.
type TaskNouner interface {
	TaskNoun(c Config) string
}

// Sampling says, for captions, how a family's meta-training distribution
// weighs its tasks (the masses MAML samples them by, metalearn.TaskSet.Mass).
type Sampling struct {
	// Formula is task i's probability, e.g. "C(Z_i, N) / sum_j C(Z_j, N)".
	Formula string
	// Terms explains the formula's symbols, e.g. "for an alphabet of Z_i
	// characters and N ways".
	Terms string
	// Order is the order of increasing probability, e.g. "fewest
	// characters Z_i first"; empty when all tasks are equally likely.
	Order string
}

// SamplingDescriber is implemented by a family that says how its
// meta-training tasks are weighed.
type SamplingDescriber interface {
	Sampling(c Config) Sampling
}

// Sampling is how c's family weighs its meta-training tasks, or the
// general statement of a family that does not say.
func (c Config) Sampling() Sampling {
	if f, err := c.Family(); err == nil {
		if d, ok := f.(SamplingDescriber); ok {
			return d.Sampling(c)
		}
	}
	return Sampling{Formula: "m_i / sum_j m_j", Terms: "for task masses m_i", Order: "least mass first"}
}

// TaskNoun is what a task of c is called: the family's TaskNoun for c, else
// its Noun, else "task".
func (c Config) TaskNoun() string {
	f, err := c.Family()
	if err != nil {
		return "task"
	}
	if n, ok := f.(TaskNouner); ok {
		if noun := n.TaskNoun(c); noun != "" {
			return noun
		}
	}
	return f.Noun()
}

// DataFamilies lists the registered families that fetch data
// (DataCommander), in registration order.
func DataFamilies() []string { return familiesThat[DataCommander]() }

// DataReaders lists the registered families that read data files
// (DataReader), in registration order.
func DataReaders() []string { return familiesThat[DataReader]() }

// familiesThat lists the registered families that implement I, in
// registration order.
func familiesThat[I any]() []string {
	var names []string
	for _, f := range families {
		if _, ok := f.(I); ok {
			names = append(names, f.Name())
		}
	}
	return names
}

// checkData refuses a data root stated for a family that reads no data
// files (not a DataReader), which it would drop without a word. The -data
// flag and $TRMAML_DATA are not the config's: they stay the machine's
// default for every family.
func (c Config) checkData() error {
	f, err := c.Family()
	if err != nil || c.Data.Root == "" {
		return nil
	}
	if _, ok := f.(DataReader); ok {
		return nil
	}
	return &fieldError{"data.root", show(c.Data.Root), fmt.Sprintf("task family %s reads no data files: only the families %s read a data section",
		f.Name(), strings.Join(DataReaders(), ", "))}
}

// EvalFields lists the fields that the registered families let an
// evaluation change (EvalFielder).
func EvalFields() []string {
	var paths []string
	for _, f := range families {
		if e, ok := f.(EvalFielder); ok {
			paths = append(paths, e.EvalFields()...)
		}
	}
	return paths
}

// Env is what a family's Tasks may need beyond the config: where the data
// lies is a property of the machine, not of the experiment.
type Env struct {
	// DataRoot, if not empty, overrides the config's data.root.
	DataRoot string
	// Cache, if not nil, keeps the data a family loads for the runs given
	// the same cache; nil loads it for each run.
	Cache *DataCache
	// Release, if not nil, describes the data the family must find instead
	// of its published release, in the family's own type (Omniglot:
	// *omniglot.Release, for a program's own data in Omniglot's layout).
	Release any
	// Warnings receives one line per problem that does not stop the run
	// (an unwritable data cache); nil is os.Stderr.
	Warnings io.Writer
}

// DataCache keeps data that families load (Omniglot's decoded images), so
// that the runs of one experiment load it once. The zero value is empty and
// ready; it is safe for concurrent use.
type DataCache struct {
	mu sync.Mutex
	m  map[any]any
}

// Load returns the value of key, calling load the first time (and every
// time on a nil cache); a failed load is not kept. Loads are serialised, so
// two runs never load the same data at once.
func (c *DataCache) Load(key any, load func() (any, error)) (any, error) {
	if c == nil {
		return load()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[key]; ok {
		return v, nil
	}
	v, err := load()
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		c.m = map[any]any{}
	}
	c.m[key] = v
	return v, nil
}

// TaskSets are a family's task sets for one config and the points of one
// instance of each.
type TaskSets struct {
	Train, Test metalearn.TaskSet
	// EvalTrain and EvalTest are the sets evaluation draws from: Train and
	// Test, or twins with another query size when evaluation scores on
	// another number of points than training.
	EvalTrain, EvalTest metalearn.TaskSet
	// EvalValidation, if not nil, holds the meta-validation tasks, drawn
	// like EvalTest: evaluated during training for meta.output best_val.
	EvalValidation metalearn.TaskSet
	// Support, Query and EvalQuery are the points of a training instance's
	// support and query sets and of an evaluated instance's query set.
	Support, Query, EvalQuery int
	// IO, if not nil, is what the points turned out to be when the family's
	// IO left a size to its data (an image folder's files decide their
	// size or channels); the model is built on it.
	IO *IO
}

// ConfigError is a config that passes field-by-field validation but cannot
// be built, such as too few evaluation instances for its task sets. It
// names the field; the caller adds the file.
type ConfigError struct {
	Field, Problem string
}

func (e *ConfigError) Error() string { return e.Field + ": " + e.Problem }

// At places cerr, an error of the config file at path, at the line of its
// field when the file states it: "path:line: field: problem", else
// "path: field: problem".
func (e *ConfigError) At(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, e)
	}
	c := Defaults()
	lines, err := DecodeStrict(path, data, &c)
	if err != nil || lines[e.Field] == 0 {
		return fmt.Errorf("%s: %w", path, e)
	}
	return fmt.Errorf("%s:%d: %w", path, lines[e.Field], e)
}

// families is the table of registered task families, in registration
// order.
var families []Family

// RegisterFamily adds a task family (call it from the family package's init
// function). It panics on a name registered twice, one that cannot be the
// key of its section task.NAME (internal/regname) or a section that is not
// a pointer to a struct: all are programming errors.
func RegisterFamily(f Family) {
	if _, ok := LookupFamily(f.Name()); ok {
		panic(fmt.Sprintf("configs: task family %q registered twice", f.Name()))
	}
	checkRegistered("task family", f.Name(), f.NewSection(), TaskConfig{})
	families = append(families, f)
}

// LookupFamily returns the registered family called name.
func LookupFamily(name string) (Family, bool) {
	i := slices.IndexFunc(families, func(f Family) bool { return f.Name() == name })
	if i < 0 {
		return nil, false
	}
	return families[i], true
}

// FamilyNamed returns the registered family called name, or an error that
// names it and lists the registered ones.
func FamilyNamed(name string) (Family, error) {
	if f, ok := LookupFamily(name); ok {
		return f, nil
	}
	return nil, fmt.Errorf("task family %q is not registered (registered: %s)", name, strings.Join(FamilyNames(), ", "))
}

// FamilyNames lists the registered families in registration order.
func FamilyNames() []string {
	names := make([]string, len(families))
	for i, f := range families {
		names[i] = f.Name()
	}
	return names
}

// checkSectionType panics unless a section is a pointer to a struct, what
// the strict decoder and Marshal handle.
func checkSectionType(kind, name string, s any) {
	if t := reflect.TypeOf(s); t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("configs: %s %q: NewSection must return a pointer to a struct, got %T", kind, name, s))
	}
}

// checkRegistered panics unless name can be the key of a kind's section
// inside the config section parent (TaskConfig, ModelConfig, InnerConfig),
// beside parent's own keys, and section is a pointer to a struct.
func checkRegistered(kind, name string, section, parent any) {
	var keys []string
	t := reflect.TypeOf(parent)
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	if err := regname.Check("configs: "+kind, name, keys); err != nil {
		panic(err.Error())
	}
	checkSectionType(kind, name, section)
}

// Family returns the registered family of c's task.family; Parse and
// Validate have refused any other.
func (c Config) Family() (Family, error) { return FamilyNamed(c.Task.Family) }

// Section returns c's section of the registered family name (a pointer to
// its type), or nil. A family reads its own settings through it.
func (t TaskConfig) Section(name string) any { return t.Sections[name] }

// Settings returns the configured settings of the registered method name
// (a pointer to the method's type), or nil.
func (c Config) Settings(name string) metalearn.MethodSettings { return c.Methods[name] }

// NewMethod returns a new running metalearn.Method of c's algorithm with
// the settings of its section.
func (c Config) NewMethod() (metalearn.Method, error) {
	s, err := c.methodSettings()
	if err != nil {
		return nil, err
	}
	return s.New(), nil
}

// methodSettings are the settings of c's algorithm: its section, or the
// method's defaults.
func (c Config) methodSettings() (metalearn.MethodSettings, error) {
	info, err := metalearn.MethodNamed(c.Algorithm)
	if err != nil {
		return nil, err
	}
	if s := c.Methods[info.Name]; s != nil {
		return s, nil
	}
	return info.New(), nil
}

// DrawnOrBatch is DrawnBatch for estimates of memory and time: meta.batch
// when the method's settings are refused (Validate reports them).
func (c Config) DrawnOrBatch() int {
	if b, err := c.DrawnBatch(); err == nil {
		return b
	}
	return c.Meta.Batch
}

// DrawnBatch is the number of task instances c's method draws and adapts
// per iteration, the training graph's tasks: meta.batch, or the candidate
// batch of a method that back-propagates only some of them (DR-MAML's).
func (c Config) DrawnBatch() (int, error) {
	m, err := c.methodSettings()
	if err != nil {
		return 0, err
	}
	b, err := metalearn.DrawnBatch(m, c.Meta.Batch)
	if err != nil {
		var se metalearn.SettingError
		if errors.As(err, &se) {
			return 0, &fieldError{c.Algorithm + "." + se.Key, show(se.Value), se.Rule}
		}
		return 0, fmt.Errorf("%s: %w", c.Algorithm, err)
	}
	return b, nil
}

// MethodInfo returns the registration of c's algorithm.
func (c Config) MethodInfo() (metalearn.MethodInfo, error) { return metalearn.MethodNamed(c.Algorithm) }

// Swept is the value of the setting that tells runs of c's method apart
// (CVaR's level), 0 when the method sweeps none.
func (c Config) Swept() float64 {
	info, ok := metalearn.LookupMethod(c.Algorithm)
	if !ok {
		return 0
	}
	s := c.Methods[info.Name]
	if info.SweptValue == nil || s == nil {
		return 0
	}
	return info.SweptValue(s)
}
