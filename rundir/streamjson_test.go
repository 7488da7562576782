package rundir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/trmaml/trmaml/metalearn"
)

type streamInner struct {
	A []float64 `json:"a,omitempty"`
	B *float64
}

type streamOuter struct {
	Name    string          `json:"name"`
	X       []float64       `json:"x"`
	Skip    []float64       `json:"-"`
	Zero    int             `json:"zero,omitempty"`
	Inner   streamInner     `json:"inner"`
	Ptr     *streamInner    `json:"ptr"`
	NilPtr  *streamInner    `json:"nil_ptr"`
	Any     any             `json:"any"`
	Raw     json.RawMessage `json:"raw"`
	Time    time.Time       `json:"time"`
	Map     map[string]int  `json:"map"`
	F32     []float32       `json:"f32"`
	private []float64
}

type streamTagged struct {
	X   []float64 `json:"x"`
	Str int       `json:"str,string"`
}

// Types whose encoding depends on encoding/json's finer rules: tag names
// it ignores, names it drops, and marshalers it calls through an address
// or on a nil value in an interface.
type (
	streamPtrM        struct{ V []float64 }
	streamHoldsPtrM   struct{ M streamPtrM }
	streamNilM        struct{}
	streamIfaceM      struct{ M json.Marshaler }
	streamPtrFloats   []float64
	streamOuterFloats struct{ P *struct{ F streamPtrFloats } }
)

// runtimeStruct builds a struct of the given fields, tagged as written, and
// sets them to values: for tags that vet and staticcheck refuse in source.
func runtimeStruct(fields []reflect.StructField, values ...any) any {
	v := reflect.New(reflect.StructOf(fields)).Elem()
	for i, x := range values {
		v.Field(i).Set(reflect.ValueOf(x))
	}
	return v.Interface()
}

// streamBadTags is a struct whose tag names encoding/json ignores, using
// the field names.
func streamBadTags() any {
	return runtimeStruct([]reflect.StructField{
		{Name: "A", Type: reflect.TypeFor[int](), Tag: `json:"a'b"`},
		{Name: "B", Type: reflect.TypeFor[[]float64](), Tag: `json:"c\\d"`},
	}, 1, []float64{0.5})
}

// streamDashName is a struct with a field named "-" (`json:"-,"`), which
// encoding/json writes.
func streamDashName() any {
	return runtimeStruct([]reflect.StructField{
		{Name: "Dash", Type: reflect.TypeFor[int](), Tag: `json:"-,"`},
		{Name: "X", Type: reflect.TypeFor[[]float64](), Tag: `json:"x"`},
	}, 4, []float64{1e-7, 3})
}

// streamDup is a struct whose names repeat: "x" twice and "X" twice.
func streamDup(x []float64) any {
	return runtimeStruct([]reflect.StructField{
		{Name: "A", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
		{Name: "B", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
		{Name: "X", Type: reflect.TypeFor[[]float64]()},
		{Name: "Y", Type: reflect.TypeFor[int](), Tag: `json:"X"`},
	}, 1, 2, x, 4)
}

func (*streamPtrM) MarshalJSON() ([]byte, error)      { return []byte(`"custom"`), nil }
func (*streamNilM) MarshalJSON() ([]byte, error)      { return []byte(`"nil-aware"`), nil }
func (*streamPtrFloats) MarshalJSON() ([]byte, error) { return []byte(`"pf"`), nil }

type streamEmbedded struct {
	streamInner
	C []float64
}

// TestStreamJSONIsMarshal: streamJSON writes json.Marshal's bytes for
// floats of every magnitude and format boundary, nil and empty slices,
// nested and pointed-to structs, interfaces, omitempty and "-" fields, and
// the values it leaves to json.Marshal (custom marshalers, maps, tag
// options, embedded fields).
func TestStreamJSONIsMarshal(t *testing.T) {
	t.Parallel()
	values := streamTestValues()
	for i, v := range values {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		w := bufio.NewWriterSize(&got, 16) // small, so that it flushes midway
		if err := streamJSON(w, reflect.ValueOf(v)); err != nil || w.Flush() != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("value %d: streamed\n%.300s\nwant\n%.300s", i, got.Bytes(), want)
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		w := bufio.NewWriter(&bytes.Buffer{})
		if err := streamJSON(w, reflect.ValueOf(streamInner{A: []float64{1, bad}})); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// streamTestValues are the values the JSON writers are tested on: floats of
// every magnitude and format boundary, nil and empty slices, nested and
// pointed-to structs, interfaces, omitempty and "-" fields, and the values
// streamJSON leaves to json.Marshal (custom marshalers, maps, tag options,
// embedded fields).
func streamTestValues() []any {
	rng := rand.New(rand.NewPCG(5, 6))
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.999999e-7, 1e-7, -1.5e-7, 1e20, 1e21, 9.99e20, -1e21,
		1e-300, 5e-324, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 123456789.125, 1e-10, 2.5e-100}
	for range 2000 {
		floats = append(floats, math.Ldexp(rng.NormFloat64(), rng.IntN(200)-100))
	}
	one := 3.5
	values := []any{
		floats,
		[]float64{},
		[]float64(nil),
		streamOuter{Name: "<&>", X: floats[:5], Skip: floats, Inner: streamInner{B: &one}, Ptr: &streamInner{A: floats[:3]},
			Any: &metalearn.Adam{LR: 0.1, M: floats[:7], V: []float64{}}, Raw: json.RawMessage(`{ "a" : [1, 2] }`),
			Time: time.Unix(12345, 6789).UTC(), Map: map[string]int{"b": 1, "a": 2}, F32: []float32{0.1, 1e-7}, private: floats},
		streamTagged{floats[:3], 9},
		streamOuter{},
		&streamOuter{Any: floats[:2]},
		streamEmbedded{streamInner{A: floats[:2]}, floats[2:4]},
		metalearn.State{Iteration: 9, W: floats, P: floats[:25], RNG: []byte{1, 2, 3}},
		metalearn.NewAdam(1e-3, 50),
		nil,
		streamBadTags(),
		streamDashName(),
		streamDup(floats[:2]),
		struct{ P *streamHoldsPtrM }{&streamHoldsPtrM{}},
		&streamHoldsPtrM{},
		streamHoldsPtrM{},
		streamIfaceM{(*streamNilM)(nil)},
		struct{ A any }{(*streamNilM)(nil)},
		streamOuterFloats{&struct{ F streamPtrFloats }{streamPtrFloats{1}}},
		struct{ A any }{&streamHoldsPtrM{}},
	}
	return values
}

// TestWriteJSONIsMarshalIndent: WriteJSON writes json.MarshalIndent's bytes
// and a newline, for the values of TestStreamJSONIsMarshal and for strings
// holding JSON's punctuation and escapes, through buffers small enough to
// split every token.
func TestWriteJSONIsMarshalIndent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	values := append(streamTestValues(),
		map[string]any{"a": []any{}, "b": map[string]any{}, "c": []any{[]any{}, map[string]any{"{": "[,]:\\\"}"}}, "\"k\"": "\u2028<>&"},
		[]any{1, "x", nil, true, []float64{1, 2}},
		"string: {with} [brackets], \"quotes\" and \\",
		Result{Name: "r", MetaTest: Stats{Tasks: []string{"a"}, PerTask: []float64{0.5}}},
	)
	for i, v := range values {
		want, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("v%d.json", i))
		if err := WriteJSON(path, v); err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, append(want, '\n')) {
			t.Errorf("value %d: wrote\n%.400s\nwant\n%.400s", i, got, want)
		}
		var small bytes.Buffer
		out := bufio.NewWriterSize(&small, 16)
		in := bufio.NewWriterSize(&indentWriter{w: out}, 16)
		if err := streamJSON(in, reflect.ValueOf(v)); err != nil || in.Flush() != nil || out.Flush() != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		if !bytes.Equal(small.Bytes(), want) {
			t.Errorf("value %d, small buffers: wrote\n%.400s\nwant\n%.400s", i, small.Bytes(), want)
		}
	}
	if err := WriteJSON(filepath.Join(dir, "nan.json"), []float64{math.NaN()}); err == nil {
		t.Error("NaN written without an error")
	}
	if _, err := os.Stat(filepath.Join(dir, "nan.json")); !os.IsNotExist(err) {
		t.Errorf("a failed WriteJSON left a file: %v", err)
	}
}
