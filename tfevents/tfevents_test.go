package tfevents

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
)

// The reader below is written from the formats' specifications, not from
// the writer: TFRecord (tensorflow/core/lib/io/record_writer.cc's layout:
// uint64 length, uint32 masked CRC-32C of the length, data, uint32 masked
// CRC-32C of the data, little-endian; mask = rotate right 15 + 0xa282ead8),
// the protocol buffer wire format, and event.proto / summary.proto
// (Event: wall_time double 1, step int64 2, file_version string 3,
// summary Summary 5; Summary: repeated Value value 1; Value: tag string 1,
// simple_value float 2).

// crc32c computes CRC-32C bit by bit (reflected polynomial 0x82F63B78),
// independently of hash/crc32's tables.
func crc32c(b []byte) uint32 {
	c := ^uint32(0)
	for _, x := range b {
		c ^= uint32(x)
		for range 8 {
			if c&1 == 1 {
				c = c>>1 ^ 0x82F63B78
			} else {
				c >>= 1
			}
		}
	}
	return ^c
}

func mask(c uint32) uint32 { return (c>>15 | c<<17) + 0xa282ead8 }

// records splits a TFRecord file, checking both checksums of each record.
func records(data []byte) ([][]byte, error) {
	var out [][]byte
	for len(data) > 0 {
		if len(data) < 12 {
			return nil, fmt.Errorf("%d trailing bytes", len(data))
		}
		n := binary.LittleEndian.Uint64(data)
		if got := binary.LittleEndian.Uint32(data[8:]); got != mask(crc32c(data[:8])) {
			return nil, fmt.Errorf("record %d: length CRC %#x, want %#x", len(out), got, mask(crc32c(data[:8])))
		}
		if uint64(len(data)) < 16+n {
			return nil, fmt.Errorf("record %d: length %d past the end", len(out), n)
		}
		body := data[12 : 12+n]
		if got := binary.LittleEndian.Uint32(data[12+n:]); got != mask(crc32c(body)) {
			return nil, fmt.Errorf("record %d: data CRC %#x, want %#x", len(out), got, mask(crc32c(body)))
		}
		out = append(out, body)
		data = data[16+n:]
	}
	return out, nil
}

// field is one protocol buffer field as read: its number, wire type and
// value (varint or fixed bits in u, length-delimited bytes in b).
type field struct {
	num, wire int
	u         uint64
	b         []byte
}

func varint(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1, nil
		}
	}
	return 0, 0, fmt.Errorf("bad varint")
}

func fields(b []byte) ([]field, error) {
	var out []field
	for len(b) > 0 {
		key, n, err := varint(b)
		if err != nil {
			return nil, err
		}
		b = b[n:]
		f := field{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case 0:
			if f.u, n, err = varint(b); err != nil {
				return nil, err
			}
		case 1:
			if len(b) < 8 {
				return nil, fmt.Errorf("short fixed64")
			}
			f.u, n = binary.LittleEndian.Uint64(b), 8
		case 5:
			if len(b) < 4 {
				return nil, fmt.Errorf("short fixed32")
			}
			f.u, n = uint64(binary.LittleEndian.Uint32(b)), 4
		case 2:
			l, m, err := varint(b)
			if err != nil || uint64(len(b)-m) < l {
				return nil, fmt.Errorf("bad length")
			}
			f.b, n = b[m:m+int(l)], m+int(l)
		default:
			return nil, fmt.Errorf("wire type %d", f.wire)
		}
		b = b[n:]
		out = append(out, f)
	}
	return out, nil
}

type event struct {
	wall    float64
	step    int64
	version string
	values  map[string]float32
	order   []string
}

func decodeEvent(t *testing.T, b []byte) event {
	t.Helper()
	fs, err := fields(b)
	if err != nil {
		t.Fatal(err)
	}
	e := event{values: map[string]float32{}}
	for _, f := range fs {
		switch {
		case f.num == 1 && f.wire == 1:
			e.wall = math.Float64frombits(f.u)
		case f.num == 2 && f.wire == 0:
			e.step = int64(f.u)
		case f.num == 3 && f.wire == 2:
			e.version = string(f.b)
		case f.num == 5 && f.wire == 2:
			vs, err := fields(f.b)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				if v.num != 1 || v.wire != 2 {
					t.Fatalf("summary field %d wire %d", v.num, v.wire)
				}
				inner, err := fields(v.b)
				if err != nil {
					t.Fatal(err)
				}
				var tag string
				var val float32
				for _, x := range inner {
					switch {
					case x.num == 1 && x.wire == 2:
						tag = string(x.b)
					case x.num == 2 && x.wire == 5:
						val = math.Float32frombits(uint32(x.u))
					default:
						t.Fatalf("value field %d wire %d", x.num, x.wire)
					}
				}
				e.values[tag], e.order = val, append(e.order, tag)
			}
		default:
			t.Fatalf("event field %d wire %d", f.num, f.wire)
		}
	}
	return e
}

func TestCRC32CCheckValue(t *testing.T) {
	// The check value of CRC-32C (RFC 3720, B.4) pins the reader's CRC;
	// the writer's must agree with it on any bytes.
	if got := crc32c([]byte("123456789")); got != 0xe3069283 {
		t.Fatalf("reader's crc32c = %#x, want 0xe3069283", got)
	}
	for _, b := range [][]byte{nil, []byte("brain.Event:2"), bytes.Repeat([]byte{0xff, 0}, 100)} {
		if maskedCRC(b) != mask(crc32c(b)) {
			t.Errorf("maskedCRC(%q) = %#x, want %#x", b, maskedCRC(b), mask(crc32c(b)))
		}
	}
}

func TestWriterRecords(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, 1.5e9)
	if err != nil {
		t.Fatal(err)
	}
	w.Scalars(1.5e9+2.25, 300, []Scalar{{"a/x", 0.125}, {"skipped", math.NaN()}, {"b", 1e6}})
	w.Scalars(1.5e9+3, 1<<40, nil)
	recs, err := records(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	first := decodeEvent(t, recs[0])
	if first.version != "brain.Event:2" || first.wall != 1.5e9 || first.step != 0 || len(first.values) != 0 {
		t.Errorf("first event %+v", first)
	}
	e := decodeEvent(t, recs[1])
	if e.wall != 1.5e9+2.25 || e.step != 300 || e.values["a/x"] != 0.125 || e.values["b"] != 1e6 || len(e.values) != 2 {
		t.Errorf("second event %+v", e)
	}
	if e := decodeEvent(t, recs[2]); e.step != 1<<40 || len(e.values) != 0 {
		t.Errorf("third event %+v", e)
	}
	// A flipped bit anywhere is caught by the reader's checksums.
	bad := bytes.Clone(buf.Bytes())
	bad[len(bad)-6] ^= 1
	if _, err := records(bad); err == nil {
		t.Error("a flipped bit went unnoticed")
	}
}

// TestExportRun exports a trained run and reads every metrics.csv and
// p.csv value back from the event file.
func TestExportRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	cfg, err := configs.Builtin("sine_quick")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Meta.Iterations, cfg.Eval.Every, cfg.Eval.Instances, cfg.Eval.TrainInstances = 200, 100, 490, 100
	cfg.Eval.CVaRAlpha = []float64{0.7}
	if _, err := run.Train(context.Background(), cfg, dir, run.Options{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "tb")
	path, err := ExportRun(dir, out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(filepath.Base(path), "tfevents") {
		t.Errorf("%s: TensorBoard reads only files named *tfevents*", path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := records(raw)
	if err != nil {
		t.Fatal(err)
	}
	table, err := rundir.ReadMetrics(filepath.Join(dir, rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	p, err := rundir.ReadP(filepath.Join(dir, rundir.PFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+len(table.Iterations) {
		t.Fatalf("%d events, want 1 + %d evaluations", len(recs), len(table.Iterations))
	}
	start := decodeEvent(t, recs[0]).wall
	for r, it := range table.Iterations {
		e := decodeEvent(t, recs[r+1])
		if e.step != int64(it) || math.Abs(e.wall-start-table.Values[rundir.Elapsed][r]) > 1e-6 {
			t.Errorf("event %d: step %d wall %v, want %d and %v s after the start", r, e.step, e.wall, it, table.Values[rundir.Elapsed][r])
		}
		for c, tag := range map[rundir.Column]string{rundir.TestMean: "meta-test/mean MSE", rundir.TestWorst: "meta-test/worst task MSE",
			rundir.TrainStd: "meta-train/std MSE", rundir.BatchMean: "meta-batch/mean loss", rundir.Elapsed: "time/elapsed (s)"} {
			want := table.Values[c][r]
			got, ok := e.values[tag]
			switch {
			case math.IsNaN(want) && ok:
				t.Errorf("iteration %d: %s = %v, where metrics.csv has no value", it, tag, got)
			case !math.IsNaN(want) && got != float32(want):
				t.Errorf("iteration %d: %s = %v, want %v", it, tag, got, float32(want))
			}
		}
		if got := e.values["meta-test/CVaR_0.7 MSE"]; got != float32(table.CVaR[0].Test[r]) {
			t.Errorf("iteration %d: meta-test/CVaR_0.7 MSE = %v, want %v", it, got, table.CVaR[0].Test[r])
		}
		sum := 0.0
		for k, task := range p.Tasks {
			got := e.values["p/"+task]
			if got != float32(p.Weights[r][k]) {
				t.Errorf("iteration %d: p/%s = %v, want %v", it, task, got, p.Weights[r][k])
			}
			sum += float64(got)
		}
		if math.Abs(sum-1) > 1e-4 {
			t.Errorf("iteration %d: p sums to %v", it, sum)
		}
	}
	// Again: the same file, replaced.
	again, err := ExportRun(dir, out)
	if err != nil || again != path {
		t.Errorf("second export: %s, %v; want %s", again, err, path)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Errorf("%d files in %s after two exports, want 1", len(entries), out)
	}
	// The file an earlier trmaml named without the config's hash is this
	// run's: replaced. Another run's event file in out is refused: one
	// folder is one run to TensorBoard.
	legacy := filepath.Join(out, fmt.Sprintf("events.out.tfevents.%d.trmaml", int64(start)))
	os.WriteFile(legacy, []byte("old export"), 0o644)
	if again, err := ExportRun(dir, out); err != nil || again != path {
		t.Errorf("export beside the earlier name: %s, %v; want %s", again, err, path)
	}
	if _, err := os.Stat(legacy); err == nil {
		t.Errorf("%s left beside %s", legacy, path)
	}
	shared := t.TempDir()
	foreign := filepath.Join(shared, "events.out.tfevents.1700000000.trmaml-0123456789ab")
	os.WriteFile(foreign, []byte("another run"), 0o644)
	if _, err := ExportRun(dir, shared); err == nil || !strings.Contains(err.Error(), filepath.Base(foreign)) {
		t.Errorf("export into a folder holding another run's events: %v, want a refusal naming it", err)
	}
	if entries, _ := os.ReadDir(shared); len(entries) != 1 {
		t.Errorf("a refused export wrote into %s: %d files", shared, len(entries))
	}
	// A damaged run is refused, and nothing is written.
	os.WriteFile(filepath.Join(dir, rundir.MetricsFile), []byte(rundir.MetricsHeader), 0o644)
	other := filepath.Join(t.TempDir(), "tb2")
	if _, err := ExportRun(dir, other); err == nil || !strings.Contains(err.Error(), rundir.MetricsFile) {
		t.Errorf("damaged run: %v", err)
	}
	if _, err := os.Stat(other); err == nil {
		t.Errorf("a refused export made %s", other)
	}
}
