package safetensors

import (
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"
)

// file builds a safetensors file by hand from a header and raw data.
func file(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

func f32(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// TestDecodeHandWritten reads a file written byte by byte from the format's
// description, independent of Encode.
func TestDecodeHandWritten(t *testing.T) {
	raw := file(`{"__metadata__":{"arch":"x"},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},"a":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]}}`,
		f32(1, -2, 0.5, 3))
	ts, meta, err := Decode("m.safetensors", raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []Tensor{{"a", []int{1, 2}, []float32{1, -2}}, {"b", []int{2}, []float32{0.5, 3}}}
	if !reflect.DeepEqual(ts, want) || meta["arch"] != "x" {
		t.Errorf("got %v %v, want %v", ts, meta, want)
	}
}

func TestRoundTrip(t *testing.T) {
	in := []Tensor{{"w", []int{2, 3}, []float32{1, 2, 3, 4, 5, 6}}, {"b", []int{3}, []float32{-1, 0, 1}}}
	raw, err := Encode(in, map[string]string{"kind": "mlp"})
	if err != nil {
		t.Fatal(err)
	}
	if n := binary.LittleEndian.Uint64(raw); (8+n)%8 != 0 {
		t.Errorf("header of %d bytes: the data does not start 8-aligned", n)
	}
	out, meta, err := Decode("m.safetensors", raw)
	if err != nil || !reflect.DeepEqual(out, in) || meta["kind"] != "mlp" {
		t.Errorf("round trip: %v %v %v", out, meta, err)
	}
}

// TestRefusals: every damaged file is refused naming it.
func TestRefusals(t *testing.T) {
	good := file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, f32(1, 2))
	huge := binary.LittleEndian.AppendUint64(nil, 1<<40)
	for _, c := range []struct {
		name string
		raw  []byte
		want string
	}{
		{"truncated length", good[:5], "m.safetensors: truncated: 5 bytes"},
		{"truncated header", good[:20], "m.safetensors: truncated: header of"},
		{"truncated data", good[:len(good)-2], "m.safetensors: truncated: tensor a ends at byte 8 of the data, the file has 6"},
		{"huge header", huge, "m.safetensors: header of 1099511627776 bytes: at most 16777216 are allowed"},
		{"unsupported dtype", file(`{"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}`, f32(1)), `m.safetensors: tensor a: dtype "F16": only F32 is supported`},
		{"overlapping offsets", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, f32(1, 2)),
			"data_offsets [4 8] overlaps the one before"},
		{"offsets past the end", file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, f32(1)), "m.safetensors: truncated: tensor a ends at byte 8 of the data, the file has 4"},
		{"wrong size", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, f32(1, 2)), "m.safetensors: tensor a: data_offsets [0 4] for 2 float32 values"},
		{"bad json", file(`{"a":`, nil), "m.safetensors: header:"},
	} {
		if _, _, err := Decode("m.safetensors", c.raw); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
