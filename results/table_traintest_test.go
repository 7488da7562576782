package results_test

import (
	"encoding/csv"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/resultstest"
)

func TestTrainTestTable(t *testing.T) {
	t.Parallel()
	tab := mustTable(t, results.NewTrainTestTable, accuracyRuns(t))
	md := tab.Markdown()
	for _, want := range []string{
		"Alphabet accuracy (%) after meta-training, across the 5 meta-training alphabets and across the 4 meta-test alphabets",
		"'Worst' is the minimum alphabet value",
		"| Setting | Algorithm | Seeds | Meta-train weighted mean | Meta-train mean | Meta-train worst | Meta-train std. dev. | Meta-test mean | Meta-test worst | Meta-test std. dev. |",
		// Weighted by C(Z, 5): 1 - mean level * 0.064906 (levels 1, 1.2 and
		// 0.5, 0.7); means 1 - 0.124 level, worst 1 - 0.3 level; meta-test
		// mean 1 - 0.25 level, worst 1 - 0.4 level. TR-MAML is better
		// everywhere, so bold.
		"| 5-way 1-shot | MAML | 2 | 92.86 ± 8.25 | 86.36 ± 15.76 | 67.00 ± 38.12 | ",
		"| 5-way 1-shot | TR-MAML | 2 | **96.11 ± 8.25** | **92.56 ± 15.76** | **82.00 ± 38.12** | **",
		"| **85.00 ± 31.77** | **76.00 ± 50.82** | **6.71 ± 14.21** |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| 5-way 1-shot | MAML | 2 | **") {
		t.Errorf("MAML's lower accuracy is bold:\n%s", md)
	}
	recs, err := csv.NewReader(strings.NewReader(tab.CSV())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0][7] != "train_weighted_mean" || recs[0][20] != "test_std_ci95" || recs[2][2] != "trmaml" || recs[2][6] != "accuracy (%)" {
		t.Fatalf("CSV %q", recs)
	}
	if v, _ := strconv.ParseFloat(recs[2][11], 64); !near(v, 82, 1e-9) {
		t.Errorf("CSV TR-MAML meta-train worst %v, want 82 (percent)", recs[2][11])
	}
}

// TestTrainTestTableMSE: with a loss, the lowest values are bold.
func TestTrainTestTableMSE(t *testing.T) {
	t.Parallel()
	md := mustTable(t, results.NewTrainTestTable, loadGroups(t, writeRuns(t, resultstest.New("m", "maml", "second", 1, 5, 1),
		resultstest.New("tr", "trmaml", "second", 1, 5, 0.5)))).Markdown()
	if !strings.Contains(md, "| 5-shot | TR-MAML | 1 | **0.62** | **0.75** | **1.50** | **0.53** | **1.50** | **2.50** | **0.71** |") ||
		!strings.Contains(md, "'Worst' is the maximum task value") {
		t.Errorf("MSE table:\n%s", md)
	}
}

func TestPerTaskCSV(t *testing.T) {
	t.Parallel()
	groups := accuracyRuns(t)
	recs, err := csv.NewReader(strings.NewReader(results.PerTaskCSV(groups))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// Two groups, 5 meta-training and 4 meta-test alphabets each.
	if len(recs) != 1+2*(5+4) {
		t.Fatalf("%d rows", len(recs))
	}
	head := recs[0]
	col := func(name string) int { return slices.Index(head, name) }
	// TR-MAML's Greek: accuracy 1 - 0.3 level (levels 0.5, 0.7) = 82 %,
	// final p 0.5, sampling probability C(24,5)/sum.
	for _, r := range recs[1:] {
		if r[col("algorithm")] != "trmaml" || r[col("task")] != "Greek" {
			continue
		}
		v, _ := strconv.ParseFloat(r[col("value")], 64)
		p, _ := strconv.ParseFloat(r[col("final_p")], 64)
		s, _ := strconv.ParseFloat(r[col("sampling_probability")], 64)
		if r[col("set")] != "meta_train" || !near(v, 82, 1e-9) || !near(p, 0.5, 1e-12) || !near(s, 42504.0/6844013, 1e-12) {
			t.Errorf("TR-MAML Greek row %q", r)
		}
		return
	}
	t.Error("no TR-MAML Greek row")
}

func TestMassOrder(t *testing.T) {
	t.Parallel()
	got := results.MassOrder([]string{"c", "b", "a", "d"}, []float64{2, 1, 2, 0.5})
	if !slices.Equal(got, []int{3, 1, 2, 0}) {
		t.Errorf("MassOrder = %v, want [3 1 2 0] (ties by name)", got)
	}
	masses := resultstest.TrainMasses()
	order := results.MassOrder(resultstest.TrainAlphabets, masses)
	for i := 1; i < len(order); i++ {
		if resultstest.TrainCharacters[order[i]] < resultstest.TrainCharacters[order[i-1]] {
			t.Errorf("mass order %v does not sort by characters %v", order, resultstest.TrainCharacters)
		}
	}
}

func TestKeySetting(t *testing.T) {
	t.Parallel()
	if s := (results.Key{K: 5}).Setting(); s != "5-shot" {
		t.Errorf("regression setting %q", s)
	}
	if s := (results.Key{K: 1, Ways: 20}).Setting(); s != "20-way 1-shot" {
		t.Errorf("classification setting %q", s)
	}
	if s := (results.Key{K: 5}).Shots(); s != "K=5" {
		t.Errorf("regression shots %q", s)
	}
	if s := (results.Key{Name: "om", Algorithm: "trmaml", Order: "second", K: 1, Ways: 20}).String(); s != "om (trmaml, second order, 20-way 1-shot)" {
		t.Errorf("classification key %q", s)
	}
	if (results.Key{K: 1, Ways: 5}).SameSetting(results.Key{K: 1, Ways: 20}) {
		t.Error("5-way and 20-way are one setting")
	}
}

func TestLabelsOfClassificationSettings(t *testing.T) {
	t.Parallel()
	groups := []*results.Group{
		{Key: results.Key{Algorithm: "maml", Order: "second", K: 1, Ways: 5}},
		{Key: results.Key{Algorithm: "trmaml", Order: "second", K: 1, Ways: 20}},
	}
	if got := results.Labels(groups); !slices.Equal(got, []string{"MAML, 5-way 1-shot", "TR-MAML, 20-way 1-shot"}) {
		t.Errorf("labels %q", got)
	}
}

func TestTaskNoun(t *testing.T) {
	t.Parallel()
	if n := results.TaskNoun(accuracyRuns(t)); n != "alphabet" {
		t.Errorf("Omniglot runs: noun %q", n)
	}
	sine := loadGroups(t, writeRuns(t, resultstest.New("s", "maml", "second", 1, 5, 1)))
	if n := results.TaskNoun(sine); n != "task" {
		t.Errorf("sinusoid runs: noun %q", n)
	}
	if n := results.TaskNoun(append(accuracyRuns(t), sine...)); n != "task" {
		t.Errorf("mixed runs: noun %q", n)
	}
}

// TestPerTaskMarkdownRefusesOtherTasks: groups of one setting whose
// meta-test alphabets differ cannot share a per-alphabet table.
func TestPerTaskMarkdownRefusesOtherTasks(t *testing.T) {
	t.Parallel()
	other := resultstest.NewAccuracy("ot", "trmaml", "second", 1, 1, 0.5)
	other.Result.MetaTest.Tasks = []string{"Atlantean", "Kannada", "Mongolian", "Tengwar"}
	other.Result.MetaTest.WorstTask = "Tengwar"
	groups := loadGroups(t, writeRuns(t, resultstest.NewAccuracy("om", "maml", "second", 1, 1, 1), other))
	if _, err := results.PerTaskMarkdown(groups); err == nil || !strings.Contains(err.Error(), "different meta_test tasks") {
		t.Errorf("error %v", err)
	}
}
