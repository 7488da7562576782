package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/run"
)

// TestQuickRunEndToEnd runs the README's first command (the built-in quick
// sine experiment) and checks what it writes, including that TR-MAML's
// adversary moved weight onto the five hard tasks.
func TestQuickRunEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the 3000-iteration quick experiment")
	}
	dir := filepath.Join(t.TempDir(), "quick")
	var out, errOut bytes.Buffer
	if err := dispatch([]string{"train", "-out", dir}, &out, &errOut); err != nil {
		t.Fatalf("train: %v\n%s", err, errOut.String())
	}
	for _, f := range []string{run.ConfigFile, run.MetricsFile, run.PFile, run.CheckpointFile, run.ModelFile, run.ResultFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, run.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	var res run.Result
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.MetaTest.PerTask) != 490 || len(res.FinalP) != 100 {
		t.Fatalf("%d meta-test tasks and %d task weights, want 490 and 100", len(res.MetaTest.PerTask), len(res.FinalP))
	}
	hard := 0.0
	for i, name := range res.MetaTrain.Tasks {
		if strings.HasPrefix(name, "amplitude [4.9") {
			hard += res.FinalP[i]
		}
	}
	if hard <= 0.05 {
		t.Errorf("weight on the 5 hard tasks is %.3f, not above the uniform 0.05", hard)
	}
	if !(res.MetaTest.Worst >= res.MetaTest.Mean && res.MetaTest.Std > 0) {
		t.Errorf("implausible statistics %+v", res.MetaTest)
	}
	if rows := strings.Count(mustRead(t, filepath.Join(dir, run.MetricsFile)), "\n"); rows != 1+7 {
		t.Errorf("metrics.csv has %d lines, want a header and 7 evaluations", rows)
	}
	if !strings.Contains(out.String(), "meta-test") {
		t.Errorf("no result table printed:\n%s", out.String())
	}

	out.Reset()
	if err := dispatch([]string{"eval", "-run", dir}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "meta-test") {
		t.Errorf("eval printed no table:\n%s", out.String())
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBadInputRefused: bad configs and flags are refused with a message
// naming file, line and field, before any run directory is created.
func TestBadInputRefused(t *testing.T) {
	tmp := t.TempDir()
	cfg := filepath.Join(tmp, "bad.yaml")
	if err := os.WriteFile(cfg, []byte("name: bad\ninner:\n  alpha: -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"train", "-config", cfg, "-out", filepath.Join(tmp, "out")}, []string{"bad.yaml:3", "inner.alpha", "> 0"}},
		{[]string{"train", "-config", filepath.Join(tmp, "missing.yaml"), "-out", filepath.Join(tmp, "out")}, []string{"missing.yaml"}},
		{[]string{"eval", "-run", filepath.Join(tmp, "nothing")}, []string{"nothing"}},
		{[]string{"eval"}, []string{"-run DIR"}},
		{[]string{"fly"}, []string{"unknown command"}},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		err := dispatch(c.args, &out, &errOut)
		if err == nil {
			t.Errorf("%v: accepted", c.args)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not mention %q", c.args, err, w)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "out")); !os.IsNotExist(err) {
		t.Error("a refused run created its output directory")
	}
}
