package rundir

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trmaml/trmaml/internal/dirlock"
	"github.com/trmaml/trmaml/internal/treetest"
	"github.com/trmaml/trmaml/metalearn"
)

// legacy holds run directories written by earlier versions of trmaml.
var legacy = filepath.Join("..", "run", "testdata", "legacy")

// TestWritersReproduceLegacyFiles reads the metrics.csv and p.csv of runs
// written by earlier versions and writes them again with MetricsRow and
// AppendPRow: the bytes are the same, so the readers lose nothing and the
// writers did not change the format.
func TestWritersReproduceLegacyFiles(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob(filepath.Join(legacy, "*", "want"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no legacy run directories in %s (%v)", legacy, err)
	}
	for _, dir := range dirs {
		m, err := ReadMetrics(filepath.Join(dir, MetricsFile))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		buf.WriteString(MetricsHeader)
		for r, it := range m.Iterations {
			v := func(c Column) float64 { return m.Values[c][r] }
			MetricsRow{
				Iteration: it, Elapsed: time.Duration(math.Round(v(Elapsed) * 1e9)), BatchMean: v(BatchMean), BatchWorst: v(BatchWorst),
				Train: Stats{Mean: v(TrainMean), Worst: v(TrainWorst), Std: v(TrainStd)},
				Test:  Stats{Mean: v(TestMean), Worst: v(TestWorst), Std: v(TestStd)},
			}.Append(&buf)
		}
		sameFile(t, filepath.Join(dir, MetricsFile), buf.Bytes())

		p, err := ReadP(filepath.Join(dir, PFile))
		if err != nil {
			t.Fatal(err)
		}
		buf.Reset()
		buf.WriteString(PHeader(p.Tasks))
		for r, it := range p.Iterations {
			AppendPRow(&buf, it, p.Weights[r])
		}
		sameFile(t, filepath.Join(dir, PFile), buf.Bytes())

		if _, err := ReadResult(filepath.Join(dir, ResultFile)); err != nil {
			t.Error(err)
		}
		if m, err := ReadModel(filepath.Join(dir, ModelFile)); err != nil || len(m.W) == 0 {
			t.Errorf("%s: %d weights, %v", dir, len(m.W), err)
		}
	}
}

func sameFile(t *testing.T, path string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: written again, %d bytes differ from the %d of the file", path, len(got), len(want))
	}
}

// TestReadRefusals: damaged CSV and JSON files are refused naming the file,
// the line where there is one, and what is wrong.
func TestReadRefusals(t *testing.T) {
	t.Parallel()
	row0 := "0,0.1,,,1,2,0.5,1,2,0.5\n"
	for _, tt := range []struct {
		name, file, content, want string
		read                      func(string) error
	}{
		{"metrics header", MetricsFile, "iteration,elapsed\n" + row0, "metrics.csv:1: header", readMetrics},
		{"metrics order", MetricsFile, MetricsHeader + "10,0.1,1,1,1,2,0.5,1,2,0.5\n" + row0, "metrics.csv:3: iteration 0 does not follow 10", readMetrics},
		{"metrics negative", MetricsFile, MetricsHeader + "0,0.1,,,1,-2,0.5,1,2,0.5\n", "metrics.csv:2: column train_worst: -2", readMetrics},
		{"metrics empty test mean", MetricsFile, MetricsHeader + "0,0.1,,,1,2,0.5,,2,0.5\n", "metrics.csv:2: column test_mean is empty", readMetrics},
		{"metrics no rows", MetricsFile, MetricsHeader, "metrics.csv: no evaluation rows", readMetrics},
		{"p not a distribution", PFile, "iteration,a,b\n0,0.5,0.6\n", "p.csv:2: weights sum to 1.1", readP},
		{"p header", PFile, "it,a\n0,1\n", `p.csv:1: header must be "iteration"`, readP},
		{"result syntax", ResultFile, "{\n\"name\": x}", "result.json:2: invalid character", readResult},
		{"result per_task", ResultFile, `{"meta_test": {"per_task": [1], "tasks": []}}`, "result.json: meta_test has 1 per_task values for 0 tasks", readResult},
		{"result final_p", ResultFile, `{"meta_test": {"per_task": [1], "tasks": ["a"]}, "meta_train": {"per_task": [1], "tasks": ["a"]}, "final_p": [0.5]}`,
			"result.json: final_p: weights sum to 0.5", readResult},
		{"result no metric", ResultFile, `{"meta_test": {"per_task": [1], "tasks": ["a"]}, "meta_train": {"per_task": [1], "tasks": ["a"]}}`,
			`result.json: metric: unknown metric ""`, readResult},
		{"result NaN", ResultFile, `{"metric": "mse", "meta_test": {"per_task": [1], "tasks": ["a"], "std": -1}, "meta_train": {"per_task": [1], "tasks": ["a"]}}`,
			"result.json: meta_test.std = -1", readResult},
		{"model", ModelFile, `{"w": "x"}`, "model.json: json: cannot unmarshal", func(p string) error { _, err := ReadModel(p); return err }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), tt.file)
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := tt.read(path); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func readMetrics(p string) error { _, err := ReadMetrics(p); return err }
func readP(p string) error       { _, err := ReadP(p); return err }
func readResult(p string) error  { _, err := ReadResult(p); return err }

// TestCheckpointHash: a checkpoint reads back as written; a changed value,
// trailing data, a missing optimizer or identity is refused; one from
// before the hash existed (no sha256 key) is refused too.
func TestCheckpointHash(t *testing.T) {
	t.Parallel()
	ck := Checkpoint{State: metalearn.State{Iteration: 3, W: []float64{0.5, -1}, P: []float64{1}}, Optimizer: json.RawMessage(`{"LR":0.1}`), TrainSeconds: 2, Seed: 7, ConfigSHA256: "abc"}
	raw, err := encodeCheckpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeCheckpoint("c.json", raw)
	if err != nil || got.State.Iteration != 3 || !slices.Equal(got.State.W, ck.State.W) || got.SHA256 == "" {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	legacy, _ := json.Marshal(ck) // SHA256 empty: omitted
	if _, err := DecodeCheckpoint("c.json", legacy); err == nil || !strings.Contains(err.Error(), "c.json: sha256: missing") {
		t.Errorf("checkpoint without a hash: %v", err)
	}
	anonymous := ck
	anonymous.ConfigSHA256 = ""
	raw2, _ := encodeCheckpoint(anonymous)
	if _, err := DecodeCheckpoint("c.json", raw2); err == nil || !strings.Contains(err.Error(), "c.json: config_sha256: missing") {
		t.Errorf("checkpoint without its run's identity: %v", err)
	}
	noOpt := ck
	noOpt.Optimizer = nil
	rawNoOpt, _ := encodeCheckpoint(noOpt)
	for _, tt := range []struct{ name, data, want string }{
		{"changed weight", strings.Replace(string(raw), "0.5", "0.6", 1), "c.json: sha256: does not match"},
		{"trailing data", string(raw) + "{}", "c.json: data after"},
		{"unknown field", `{"state":{},"optimizer":{},"extra":1}`, `c.json: json: unknown field "extra"`},
		{"no optimizer", string(rawNoOpt), "c.json: optimizer: missing"},
	} {
		if _, err := DecodeCheckpoint("c.json", []byte(tt.data)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestCreateAndOpen: Create refuses a directory with content (pointing an
// unfinished run to resume) and accepts one holding only temporary files,
// which it removes; Open takes the lock, so a second holder is refused.
func TestCreateAndOpen(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "run")
	os.MkdirAll(dir, 0o755)
	stray := filepath.Join(dir, ".metrics.csv.tmp123")
	os.WriteFile(stray, nil, 0o644)
	lock, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Error("the temporary file of an interrupted write is still there")
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), dirlock.ErrHeld.Error()) {
		t.Errorf("second holder: %v, want %v", err, dirlock.ErrHeld)
	}
	os.WriteFile(filepath.Join(dir, ConfigFile), nil, 0o644)
	if _, err := Create(dir); !errors.Is(err, dirlock.ErrHeld) || strings.Contains(err.Error(), "resume") {
		t.Errorf("a run directory another process is writing: %v, want it reported as in use, without advice to resume", err)
	}
	lock.Release()
	if _, err := Create(dir); err == nil || !strings.Contains(err.Error(), "trmaml resume -run "+dir) {
		t.Errorf("unfinished run: %v, want advice to resume", err)
	}
	os.WriteFile(filepath.Join(dir, ResultFile), nil, 0o644)
	if _, err := Create(dir); err == nil || !strings.Contains(err.Error(), "choose a new -out") {
		t.Errorf("finished run: %v, want a refusal", err)
	}
}

// TestKeepRows: resume keeps the rows up to the checkpoint's iteration and
// refuses a file without that row.
func TestKeepRows(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), PFile)
	header := PHeader([]string{"a,b", "c"})
	os.WriteFile(path, []byte(header+"0,0.5,0.5\n10,0.25,0.75\n20,0,1\n"), 0o644)
	var buf bytes.Buffer
	if err := KeepRows(path, header, 3, 10, &buf); err != nil || buf.String() != header+"0,0.5,0.5\n10,0.25,0.75\n" {
		t.Errorf("kept %q, %v", buf.String(), err)
	}
	buf.Reset()
	if err := KeepRows(path, header, 3, 15, &buf); err == nil || !strings.Contains(err.Error(), "p.csv:4: iteration 20 out of order") {
		t.Errorf("no row for the checkpoint: %v", err)
	}
}

// TestHashedCheckpointBeforeIdentity: a checkpoint written with its hash
// but before checkpoints named their run (no seed, no config_sha256) is
// refused (nothing proves which run it belongs to), and a changed one for
// its hash.
func TestHashedCheckpointBeforeIdentity(t *testing.T) {
	old := struct {
		State        metalearn.State `json:"state"`
		Optimizer    json.RawMessage `json:"optimizer"`
		TrainSeconds float64         `json:"train_seconds"`
		EvalSeconds  float64         `json:"eval_seconds"`
	}{metalearn.State{Iteration: 7, W: []float64{0.5, -1}}, json.RawMessage(`{"lr":0.001}`), 3, 1}
	body, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	raw := append(body[:len(body)-1:len(body)-1], []byte(`,"sha256":"`+hex.EncodeToString(sum[:])+`"}`)...)
	if _, err := DecodeCheckpoint("checkpoint.json", raw); err == nil || !strings.Contains(err.Error(), "config_sha256: missing") {
		t.Errorf("an old checkpoint without its run's identity: %v, want a refusal", err)
	}
	changed := bytes.Replace(raw, []byte(`0.5`), []byte(`0.6`), 1)
	if _, err := DecodeCheckpoint("checkpoint.json", changed); err == nil || !strings.Contains(err.Error(), "sha256: does not match") {
		t.Errorf("changed old checkpoint: %v", err)
	}
}

// TestEncodeCheckpointIsMarshal: the streaming encoder writes what
// json.Marshal does for the checkpoint with its hash set (an OptimizerState
// as its marshalled Optimizer), the hash being that of json.Marshal's
// encoding without it; WriteCheckpoint writes the same bytes and returns
// their SHA-256. The legacy runs' checkpoints
// supply real optimizer states and weights.
func TestEncodeCheckpointIsMarshal(t *testing.T) {
	t.Parallel()
	cks := []Checkpoint{
		{State: metalearn.State{Iteration: 3, W: []float64{0.5, -1e-300, math.MaxFloat64}, P: []float64{1}}, Optimizer: json.RawMessage(`{"LR": 0.1}`), TrainSeconds: 2, Seed: 7, ConfigSHA256: "<&>"},
		{State: metalearn.State{}, Optimizer: json.RawMessage(`null`), Pending: &Pending{Evaluated: 1, BatchSum: 0.25, BatchN: 2}, Previous: "abc"},
		{},
		{State: metalearn.State{Iteration: 5, W: []float64{0.25, 3e-7}}, OptimizerState: &metalearn.Adam{LR: 1e-3, M: []float64{1e-9, -2}, V: []float64{4e21, 0}, T: 5}, Seed: 2},
	}
	paths, err := filepath.Glob(filepath.Join(legacy, "*", "*", CheckpointFile))
	if err != nil || len(paths) == 0 {
		t.Fatalf("legacy checkpoints: %v, %v", paths, err)
	}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var ck Checkpoint
		if err := json.Unmarshal(raw, &ck); err != nil {
			t.Fatal(err)
		}
		cks = append(cks, ck)
	}
	dir := t.TempDir()
	for i, ck := range cks {
		ck.SHA256 = "stale"
		ref := ck
		ref.SHA256 = ""
		if ck.OptimizerState != nil { // written in Optimizer's place
			if ref.Optimizer, err = json.Marshal(ck.OptimizerState); err != nil {
				t.Fatal(err)
			}
		}
		content, err := json.Marshal(ref)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(content)
		ref.SHA256 = hex.EncodeToString(sum[:])
		want, _ := json.Marshal(ref)

		got, err := encodeCheckpoint(ck)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("checkpoint %d: encodeCheckpoint gave %.200q (%v), want %.200q", i, got, err, want)
		}
		path := filepath.Join(dir, CheckpointFile)
		fileSum, err := WriteCheckpoint(path, ck)
		written, _ := os.ReadFile(path)
		if wantSum := sha256.Sum256(want); err != nil || !bytes.Equal(written, want) || fileSum != hex.EncodeToString(wantSum[:]) {
			t.Errorf("checkpoint %d: WriteCheckpoint wrote %.200q, sum %s (%v)", i, written, fileSum, err)
		}
	}
}

// TestWriteCheckpointRefusesNilOptimizer: a nil optimizer state would be
// written as null and refused when the run resumes, so it is refused now.
func TestWriteCheckpointRefusesNilOptimizer(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), CheckpointFile)
	if _, err := WriteCheckpoint(path, Checkpoint{OptimizerState: (*metalearn.Adam)(nil)}); err == nil || !strings.Contains(err.Error(), "nil optimizer state") {
		t.Errorf("nil *Adam: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused checkpoint left %s: %v", path, err)
	}
}

// TestTailWriter: whatever the pieces it is written in, all but the last
// two bytes pass through, in order.
func TestTailWriter(t *testing.T) {
	t.Parallel()
	data := []byte(`{"a":[1,2,3]}` + "\n")
	for _, piece := range []int{1, 2, 3, 5, len(data)} {
		var out bytes.Buffer
		w := &tailWriter{w: &out}
		for rest := data; len(rest) > 0; {
			n := min(piece, len(rest))
			if k, err := w.Write(rest[:n]); k != n || err != nil {
				t.Fatalf("pieces of %d: Write returned %d, %v", piece, k, err)
			}
			rest = rest[n:]
		}
		if out.String() != string(data[:len(data)-2]) || string(w.tail) != "}\n" {
			t.Errorf("pieces of %d: passed %q, kept %q", piece, out.String(), w.tail)
		}
	}
}

// TestMetricsHeaders: the header with units of each metric and the one
// written before units are read, and resumed under as they are; another
// header is refused, naming the file.
func TestMetricsHeaders(t *testing.T) {
	dir := t.TempDir()
	row := "0,0.1,,,1,2,0.5,1,2,0.5\n"
	for _, h := range []string{MetricsHeader, MetricsHeaderFor("mse"), MetricsHeaderFor("accuracy")} {
		path := filepath.Join(dir, MetricsFile)
		if err := os.WriteFile(path, []byte(h+row), 0o644); err != nil {
			t.Fatal(err)
		}
		if m, err := ReadMetrics(path); err != nil || len(m.Iterations) != 1 {
			t.Errorf("%q: %v", h, err)
		}
		if got, cvar, err := MetricsHeaderIn(path); got != h || cvar != nil || err != nil {
			t.Errorf("MetricsHeaderIn of %q = %q, %v, %v", h, got, cvar, err)
		}
	}
	if !strings.Contains(MetricsHeaderFor("accuracy"), ",test_mean_accuracy_fraction,") || !strings.Contains(MetricsHeaderFor("mse"), ",batch_mean_loss,") {
		t.Errorf("headers %q, %q", MetricsHeaderFor("accuracy"), MetricsHeaderFor("mse"))
	}
	path := filepath.Join(dir, MetricsFile)
	os.WriteFile(path, []byte("iteration,loss\n"+row), 0o644)
	if _, _, err := MetricsHeaderIn(path); err == nil || !strings.Contains(err.Error(), path+":1:") {
		t.Errorf("a foreign header: %v", err)
	}
}

// TestMetricsCVaRColumns: a run with eval.cvar_alpha writes a train and a
// test CVaR column per level, named with the level and the unit, which
// ReadMetrics reads back and resume finds in the header; a row without
// the level, or a header with a malformed, out-of-range or repeated level,
// is refused.
func TestMetricsCVaRColumns(t *testing.T) {
	t.Parallel()
	h := MetricsHeaderFor("accuracy", 0.5, 0.7)
	if !strings.HasSuffix(h, ",test_std_accuracy_fraction,train_cvar0.5_accuracy_fraction,test_cvar0.5_accuracy_fraction,"+
		"train_cvar0.7_accuracy_fraction,test_cvar0.7_accuracy_fraction\n") {
		t.Fatalf("header %q", h)
	}
	tail := func(a, b float64) []TailStat { return []TailStat{{0.5, a}, {0.7, b}} }
	var buf bytes.Buffer
	buf.WriteString(h)
	for i, it := range []int{0, 10} {
		row := MetricsRow{Iteration: it, BatchMean: math.NaN(), BatchWorst: math.NaN(), CVaRAlpha: []float64{0.5, 0.7},
			Train: Stats{Mean: 0.9, Worst: 0.5, Std: 0.1, CVaR: tail(0.8, 0.7+float64(i)/100)},
			Test:  Stats{Mean: 0.8, Worst: 0.4, Std: 0.1, CVaR: tail(0.6, 0.5)}}
		if err := row.Append(&buf); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), MetricsFile)
	os.WriteFile(path, buf.Bytes(), 0o644)
	m, err := ReadMetrics(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []CVaRColumns{{0.5, []float64{0.8, 0.8}, []float64{0.6, 0.6}}, {0.7, []float64{0.7, 0.71}, []float64{0.5, 0.5}}}
	if !reflect.DeepEqual(m.CVaR, want) || m.Values[TestMean][1] != 0.8 {
		t.Errorf("read %+v, want %+v", m.CVaR, want)
	}
	if got, cvar, err := MetricsHeaderIn(path); got != h || !slices.Equal(cvar, []float64{0.5, 0.7}) || err != nil {
		t.Errorf("MetricsHeaderIn = %q, %v, %v", got, cvar, err)
	}
	if err := (MetricsRow{CVaRAlpha: []float64{0.9}, Iteration: 20}).Append(&buf); err == nil || !strings.Contains(err.Error(), "no CVaR_0.9") {
		t.Errorf("a row without its level: %v", err)
	}
	base := strings.TrimSpace(MetricsHeaderFor("mse"))
	for _, c := range []struct{ extra, want string }{
		{",train_cvar1.5_mse,test_cvar1.5_mse", `column 11: "train_cvar1.5_mse", want train_cvarALPHA_mse with ALPHA in (0, 1)`},
		{",train_cvar0.5_mse,test_cvar0.7_mse", `column 12: "test_cvar0.7_mse", want "test_cvar0.5_mse"`},
		{",train_cvar0.5_mse,test_cvar0.5_mse,train_cvar0.5_mse,test_cvar0.5_mse", "level 0.5 repeated"},
		{",train_cvar0.50_mse,test_cvar0.50_mse", `column 11: "train_cvar0.50_mse"`},
		{",train_cvar0.5_mse", "is not a metrics.csv header"},
	} {
		os.WriteFile(path, []byte(base+c.extra+"\n"), 0o644)
		if _, err := ReadMetrics(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("header +%q: %v, want %q", c.extra, err, c.want)
		}
	}
}

// TestLockRunRefusesNonRunWritingNothing: a directory that is not a run
// directory (empty, holding other files) or is not a directory at all is
// refused by LockRun before its lock file is created, so the refused call
// leaves the directory as it was.
func TestLockRunRefusesNonRunWritingNothing(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mk := func(name string, files ...string) string {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(p, f), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		dir  string
		want string
	}{
		{mk("empty"), "has no config.yaml: not a run directory"},
		{mk("other", "notes.txt", MetricsFile), "has no config.yaml: not a run directory"},
		{file, "is not a directory"},
		{filepath.Join(root, "missing"), "no such file or directory"},
	}
	for _, c := range cases {
		before := treetest.Of(t, root)
		lock, err := LockRun(c.dir)
		if err == nil {
			lock.Release()
			t.Errorf("%s: accepted", c.dir)
			continue
		}
		if !strings.Contains(err.Error(), c.dir) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want it to name the directory and say %q", c.dir, err, c.want)
		}
		if diff := before.Diff(treetest.Of(t, root)); diff != "" {
			t.Errorf("%s: a refused LockRun changed the tree:\n%s", c.dir, diff)
		}
	}
	run := mk("run", ConfigFile)
	lock, err := LockRun(run)
	if err != nil {
		t.Fatalf("a directory with config.yaml: %v", err)
	}
	lock.Release()
}

// TestEvalFileForOrder: the file of an evaluation is named by its
// changes whatever the order of the -set flags, and a list already in
// order keeps the name it had (runs and docs refer to those names).
func TestEvalFileForOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sets []string
		want string
	}{
		{nil, "evaluation.json"},
		{[]string{"eval.steps=2"}, "evaluation-eval.steps=2.json"},
		{[]string{"task.omniglot.resize=nearest", "task.omniglot.rotate_eval=false"}, "evaluation-task.omniglot.resize=nearest,task.omniglot.rotate_eval=false.json"},
		{[]string{"task.omniglot.rotate_eval=false", "task.omniglot.resize=nearest"}, "evaluation-task.omniglot.resize=nearest,task.omniglot.rotate_eval=false.json"},
		{[]string{"eval.steps=2", "eval.instances=600"}, "evaluation-eval.instances=600,eval.steps=2.json"},
		{[]string{"task.omniglot.resize=nearest", "eval.steps=2", "eval.instances=600"}, "evaluation-eval.instances=600,eval.steps=2,task.omniglot.resize=nearest.json"},
	} {
		in := slices.Clone(tc.sets)
		if got := EvalFileFor(tc.sets); got != tc.want {
			t.Errorf("EvalFileFor(%q) = %s, want %s", tc.sets, got, tc.want)
		}
		if !slices.Equal(in, tc.sets) {
			t.Errorf("EvalFileFor reordered its argument: %q, was %q", tc.sets, in)
		}
	}
	var levels []string
	for i := 1; i < 90; i++ {
		levels = append(levels, fmt.Sprintf("0.%03d", i*11))
	}
	long := []string{"eval.steps=3", "eval.cvar_alpha=[" + strings.Join(levels, ",") + "]"}
	if a, b := EvalFileFor(long), EvalFileFor([]string{long[1], long[0]}); a != b {
		t.Errorf("a long list in two orders: %s and %s, want one name", a, b)
	}
}

// TestEvalFileForLongSets: the file of an evaluation under many changes
// keeps a name the file system takes (at most 255 bytes with the
// temporary file's additions): the changes are cut and a hash of all of
// them appended, so two long lists that share a start get two files.
// Short ones keep their readable names.
func TestEvalFileForLongSets(t *testing.T) {
	t.Parallel()
	if got := EvalFileFor([]string{"eval.steps=2", "task.omniglot.resize=nearest"}); got != "evaluation-eval.steps=2,task.omniglot.resize=nearest.json" {
		t.Errorf("short changes: %s", got)
	}
	var levels []string
	for i := 1; i < 90; i++ {
		levels = append(levels, fmt.Sprintf("0.%03d", i*11))
	}
	long := []string{"eval.cvar_alpha=[" + strings.Join(levels, ",") + "]"}
	other := []string{"eval.cvar_alpha=[" + strings.Join(levels[:88], ",") + ",0.999]"}
	a, b := EvalFileFor(long), EvalFileFor(other)
	if len(a) > maxEvalName || len(b) > maxEvalName || !strings.HasPrefix(a, "evaluation-eval.cvar_alpha=_0.011,") || !strings.HasSuffix(a, ".json") {
		t.Errorf("long changes: %s (%d bytes), want at most %d", a, len(a), maxEvalName)
	}
	if a == b || a != EvalFileFor(long) {
		t.Errorf("two long lists: %s and %s, want distinct, stable names", a, b)
	}
	dir := t.TempDir()
	if err := WriteJSON(filepath.Join(dir, a), map[string]int{"x": 1}); err != nil {
		t.Errorf("writing %s: %v", a, err)
	}
}

// TestSealExistingDamagedManifest: seal of a directory whose manifest.json
// is damaged says so and how to recompute it; it said "it is sealed".
func TestSealExistingDamagedManifest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, content := range map[string]string{ConfigFile: "name: x\n", ManifestFile: "{\"version\": 1, garbage"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := treetest.Of(t, dir)
	err := SealExisting(dir)
	if err == nil || strings.Contains(err.Error(), "it is sealed") || !strings.Contains(err.Error(), filepath.Join(dir, ManifestFile)) || !strings.Contains(err.Error(), "move it away") {
		t.Errorf("seal with a damaged manifest: %v, want it named damaged, with what to do", err)
	}
	if diff := before.Diff(treetest.Of(t, dir)); diff != "" {
		t.Errorf("a refused seal changed the directory:\n%s", diff)
	}
}
