package serve

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/plots"
	"github.com/trmaml/trmaml/run"
)

// TestBrowserWatchesTrainingGrid starts two runs of a grid training, a
// finished one and a damaged one, serves their folder, loads the page in
// headless Chromium (Debian's chromium and chromium-driver, through the
// WebDriver protocol) and checks what a researcher sees: every run with
// its state, the running runs' latest iteration, curves drawn, and the
// page moving on by itself when a run evaluates again. The screenshot goes
// to $TRMAML_SCREENSHOT when set (docs/figures/serve.png was made so).
// Skipped without chromium unless TRMAML_REQUIRE_BROWSER=1 (CI).
func TestBrowserWatchesTrainingGrid(t *testing.T) {
	chromium, driver := lookBrowser(t)
	root := t.TempDir()

	// The finished run: short; the damaged one: its copy with a
	// manifest that no longer parses.
	base, err := configs.Builtin("sine_quick")
	if err != nil {
		t.Fatal(err)
	}
	quick := base.Clone()
	quick.Meta.Iterations, quick.Eval.Every, quick.Eval.Instances, quick.Eval.TrainInstances = 400, 200, 490, 100
	quick.Eval.CVaRAlpha = []float64{0.9}
	// The finished run is CVaR's, whose name sorts before the grid's
	// methods: a page colouring by sorted values would give it MAML's blue.
	for name, alg := range map[string]string{"done": "cvar", "broken": "trmaml"} {
		cfg := quick.Clone()
		cfg.Algorithm = alg
		if _, err := run.Train(context.Background(), cfg, filepath.Join(root, name), run.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "broken", "manifest.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The grid still training: TR-MAML and MAML, long enough to outlast
	// the test, evaluated often.
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	for _, alg := range []string{"trmaml", "maml"} {
		cfg := quick.Clone()
		cfg.Algorithm, cfg.Meta.Iterations, cfg.Eval.Every = alg, 1_000_000, 100
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := run.Train(ctx, cfg, filepath.Join(root, "grid", alg), run.Options{})
			if err != nil && !errors.Is(err, run.ErrInterrupted) {
				t.Error(err)
			}
		}()
	}

	s, err := New([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()

	wd := startDriver(t, chromium, driver)
	if err := wd.call("POST", "/url", map[string]any{"url": srv.URL + "/"}, nil); err != nil {
		t.Fatal(err)
	}
	// rows reads the run table as the page shows it: name -> state and
	// iteration.
	rows := func() map[string][2]string {
		var got []string
		if err := wd.call("POST", "/execute/sync", map[string]any{"args": []any{}, "script": `return [...document.querySelectorAll("#runs tbody tr")].map(r => r.dataset.dir + "|" + r.dataset.state + "|" + r.dataset.iteration)`}, &got); err != nil {
			t.Fatal(err)
		}
		m := map[string][2]string{}
		for _, g := range got {
			f := strings.Split(g, "|")
			m[strings.TrimPrefix(f[0], root+string(filepath.Separator))] = [2]string{f[1], f[2]}
		}
		return m
	}
	var first map[string][2]string
	waitFor(t, "both grid runs running past their first evaluation", func() bool {
		first = rows()
		evaluated := func(r [2]string) bool {
			it, err := strconv.Atoi(r[1])
			return r[0] == "running" && err == nil && it > 0
		}
		return evaluated(first["grid/trmaml"]) && evaluated(first["grid/maml"])
	})
	if got := first["done"]; got != [2]string{"finished", "400"} {
		t.Errorf("finished run shows %v, want finished at 400", got)
	}
	var cvar string
	wd.call("POST", "/execute/sync", map[string]any{"args": []any{}, "script": `return document.querySelector('#runs tr[data-dir$="done"] .cvar').textContent`}, &cvar)
	if !strings.HasPrefix(cvar, "α 0.9: ") {
		t.Errorf("finished run's CVaR cell %q", cvar)
	}
	if got := first["broken"]; got[0] != "damaged" {
		t.Errorf("damaged run shows %v", got)
	}
	var detail string
	wd.call("POST", "/execute/sync", map[string]any{"args": []any{}, "script": `return document.querySelector('#runs tr[data-dir$="broken"] .detail').textContent`}, &detail)
	if !strings.Contains(detail, "manifest.json") {
		t.Errorf("damaged run's detail %q does not name its manifest", detail)
	}
	// Coloured by algorithm, runs take their method's colour in a figure
	// of the listed methods (plots.MethodColours).
	listed := plots.MethodColours([]string{"cvar", "trmaml", "maml"})
	for dir, alg := range map[string]string{"grid/maml": "maml", "grid/trmaml": "trmaml", "done": "cvar"} {
		var got string
		wd.call("POST", "/execute/sync", map[string]any{"args": []any{}, "script": `return getComputedStyle(document.querySelector('#runs tr[data-dir$="` + dir + `"] .swatch')).backgroundColor`}, &got)
		c := listed[alg]
		if want := fmt.Sprintf("rgb(%d, %d, %d)", c.R, c.G, c.B); got != want {
			t.Errorf("%s's swatch is %q, want the figures' %q", alg, got, want)
		}
	}
	var curves int
	waitFor(t, "curves drawn", func() bool {
		wd.call("POST", "/execute/sync", map[string]any{"args": []any{}, "script": `return document.querySelectorAll("#charts path.curve").length`}, &curves)
		return curves >= 4
	})
	// A damaged run is not drawn until chosen; chosen, its curves are
	// dashed and the legend says why.
	var damaged int
	wd.call("POST", "/execute/sync", map[string]any{"args": []any{}, "script": `return document.querySelectorAll("#charts path.damaged").length`}, &damaged)
	if damaged != 0 {
		t.Errorf("%d curves of the damaged run drawn before it was chosen", damaged)
	}
	if err := wd.call("POST", "/execute/sync", map[string]any{"args": []any{}, "script": `document.querySelector('#runs tr[data-dir$="broken"] input').click(); return null`}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the chosen damaged run's curves dashed, and the legend saying so", func() bool {
		var note string
		wd.call("POST", "/execute/sync", map[string]any{"args": []any{}, "script": `return document.querySelectorAll('#charts path.damaged[stroke-dasharray]').length + "|" + ((document.querySelector("#legend .damaged-note") || {}).textContent || "")`}, &note)
		n, text, _ := strings.Cut(note, "|")
		return n != "0" && strings.Contains(text, "damaged") && strings.Contains(text, "broken")
	})
	// The page moves on by itself: a later iteration without reloading.
	waitFor(t, "the page to show a later iteration of grid/trmaml", func() bool {
		now := rows()["grid/trmaml"][1]
		return now != first["grid/trmaml"][1] && now != ""
	})
	var shot string
	if err := wd.call("GET", "/screenshot", nil, &shot); err != nil {
		t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(shot)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot is not a PNG (%v)", err)
	}
	out := os.Getenv("TRMAML_SCREENSHOT")
	if out == "" {
		out = filepath.Join(t.TempDir(), "serve.png")
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes); rows %v", out, len(png), rows())
}

// lookBrowser returns the paths of chromium and chromedriver, or skips
// the test (fails it under TRMAML_REQUIRE_BROWSER=1) without them.
func lookBrowser(t *testing.T) (string, string) {
	chromium, err1 := exec.LookPath("chromium")
	driver, err2 := exec.LookPath("chromedriver")
	if err := errors.Join(err1, err2); err != nil {
		if os.Getenv("TRMAML_REQUIRE_BROWSER") == "1" {
			t.Fatalf("TRMAML_REQUIRE_BROWSER=1 but %v (apt-get install chromium chromium-driver)", err)
		}
		t.Skipf("no headless browser here (%v): apt-get install chromium chromium-driver", err)
	}
	return chromium, driver
}

// webDriver is a WebDriver session, spoken to over HTTP as the W3C
// protocol says: POST/GET session/ID/COMMAND with JSON {"value": ...}.
type webDriver struct{ base string }

func (wd webDriver) call(method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, wd.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var reply struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.NewDecoder(res.Body).Decode(&reply); err != nil {
		return fmt.Errorf("%s %s: %s: %w", method, path, res.Status, err)
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, path, res.Status, reply.Value)
	}
	if out != nil {
		return json.Unmarshal(reply.Value, out)
	}
	return nil
}

// startDriver starts chromedriver on a free port and a headless Chromium
// session with a fresh profile; both end with the test.
func startDriver(t *testing.T, chromium, driver string) webDriver {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(driver, fmt.Sprintf("--port=%d", port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	wd := webDriver{base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	waitFor(t, "chromedriver to answer", func() bool { return wd.call("GET", "/status", nil, nil) == nil })
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"goog:chromeOptions": map[string]any{"binary": chromium, "args": []string{
			"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--user-data-dir=" + t.TempDir(), "--window-size=1400,1300",
		}},
	}}}
	var session struct {
		SessionID string `json:"sessionId"`
	}
	if err := wd.call("POST", "/session", caps, &session); err != nil {
		t.Fatal(err)
	}
	wd.base += "/session/" + session.SessionID
	t.Cleanup(func() { wd.call("DELETE", "", nil, nil) })
	return wd
}

// waitFor polls cond for up to two minutes (the runs share two busy
// cores with the browser), failing the test if it never holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
