package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/internal/omniglottest"
	omniglot "github.com/trmaml/trmaml/tasks/omniglot/data"
)

func TestDataOmniglotInfoAndVerify(t *testing.T) {
	t.Parallel()
	root := omniglottest.Root(t)
	var out, errOut bytes.Buffer
	if err := dispatch([]string{"data", "omniglot", "-dir", root, "-info"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	for _, want := range []string{
		`train\s+Tifinagh\s+55\s+1100`,
		`validation\s+Blackfoot_\(Canadian_Aboriginal_Syllabics\)\s+14\s+280`,
		`train total\s+25 alphabets\s+883\s+17660`,
		`validation total\s+5 alphabets\s+81\s+1620`,
		`test total\s+20 alphabets\s+659\s+13180`,
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("-info output lacks %s:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := dispatch([]string{"data", "omniglot", "-dir", root, "-verify"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Omniglot verified") || !strings.Contains(out.String(), omniglot.ContentSHA256) {
		t.Errorf("-verify printed %q", out.String())
	}
}

func TestDataOmniglotDownload(t *testing.T) {
	t.Parallel()
	shared := filepath.Join(omniglottest.Root(t), "omniglot")
	srv := httptest.NewServer(http.StripPrefix("/python/", http.FileServer(http.Dir(shared))))
	defer srv.Close()
	root := t.TempDir()
	var out, errOut bytes.Buffer
	if err := dispatch([]string{"data", "omniglot", "-dir", root, "-url", srv.URL + "/python"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	if err := omniglot.Verify(root); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "100%") || !strings.Contains(out.String(), "data root from flag") {
		t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
	}
}

func TestDataOmniglotErrors(t *testing.T) {
	empty := t.TempDir()
	t.Setenv(omniglot.EnvRoot, empty)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"data"}, "missing dataset name"},
		{[]string{"data", "mnist"}, `unknown dataset "mnist" (known: omniglot)`},
		{[]string{"data", "sinusoid"}, `unknown dataset "sinusoid" (known: omniglot)`}, // a family without data
		{[]string{"data", "omniglot", "-verify", "extra"}, "unexpected arguments"},
		{[]string{"data", "omniglot", "-verify"}, "fetch them with: trmaml data omniglot -dir " + empty + " (data root from $TRMAML_DATA)"},
		{[]string{"data", "omniglot", "-info", "-dir", filepath.Join(empty, "x")}, "omniglot data missing in data root " + filepath.Join(empty, "x")},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		err := dispatch(tt.args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want %q", tt.args, err, tt.want)
		}
	}
}
