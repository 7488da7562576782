package data

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveRoot(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	t.Setenv("HOME", "/home/u")
	tests := []struct {
		flag, config, env string
		want              Root
	}{
		{"/f", "/c", "/e", Root{Dir: "/f", Source: "flag"}},
		{"", "/c", "/e", Root{Dir: "/c", Source: "config"}},
		{"", "", "/e", Root{Dir: "/e", Source: EnvRoot}},
		{"", "", "", Root{Dir: "", Source: "default"}},
	}
	for _, tt := range tests {
		t.Setenv(EnvRoot, tt.env)
		got, err := ResolveRoot(tt.flag, tt.config)
		if err != nil {
			t.Fatal(err)
		}
		want := tt.want
		if want.Source == "default" {
			cache, err := os.UserCacheDir()
			if err != nil {
				t.Fatal(err)
			}
			want.Dir = filepath.Join(cache, "trmaml")
		}
		if got != want {
			t.Errorf("flag %q config %q env %q: %+v, want %+v", tt.flag, tt.config, tt.env, got, want)
		}
	}
}

func TestMissingRootErrorSaysWhereAndHow(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "nowhere")
	for _, f := range []func(string) error{
		func(r string) error { _, err := Load(r, Options{Size: 28}); return err },
		Verify,
		func(r string) error { _, err := List(r); return err },
	} {
		err := f(root)
		if !errors.Is(err, ErrMissing) {
			t.Fatalf("got %v", err)
		}
		for _, want := range []string{
			filepath.Join(root, Dir, "images_background.zip"),
			filepath.Join(root, Dir, "images_evaluation.zip"),
			"fetch them with: trmaml data omniglot -dir " + root,
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q:\n%v", want, err)
			}
		}
	}
}

func TestListShared(t *testing.T) {
	t.Parallel()
	alphabets, err := List(sharedRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	count := map[Split][2]int{}
	for _, a := range alphabets {
		c := count[a.Split]
		count[a.Split] = [2]int{c[0] + 1, c[1] + a.Characters}
	}
	want := map[Split][2]int{Train: {25, 883}, Validation: {5, 81}, Test: {20, 659}}
	for s, w := range want {
		if count[s] != w {
			t.Errorf("%s: %v alphabets and characters, want %v", s, count[s], w)
		}
	}
}

func TestParseSplit(t *testing.T) {
	t.Parallel()
	for _, s := range Splits {
		if got, err := ParseSplit(s.String()); err != nil || got != s {
			t.Errorf("%v: %v %v", s, got, err)
		}
	}
	if _, err := ParseSplit("meta-train"); err == nil || !strings.Contains(err.Error(), "allowed: train, validation, test") {
		t.Errorf("got %v", err)
	}
}

func TestAnnotateNamesTheRootsOrigin(t *testing.T) {
	t.Parallel()
	base := errors.New("no data")
	for source, want := range map[string]string{
		"flag":    "no data (data root from the command line)",
		"config":  "no data (data root from the config)",
		EnvRoot:   "no data (data root from $TRMAML_DATA)",
		"default": "no data (the default data root; set $TRMAML_DATA or pass a data directory to use another)",
	} {
		err := Root{Dir: "/r", Source: source}.Annotate(base)
		if err.Error() != want || !errors.Is(err, base) {
			t.Errorf("%s: %v", source, err)
		}
	}
	if (Root{Dir: "/r", Source: "flag"}).Annotate(nil) != nil {
		t.Error("annotated a nil error")
	}
}
