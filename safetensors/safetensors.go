// Package safetensors reads and writes the safetensors format
// (huggingface/safetensors): an 8-byte little-endian header length N, N
// bytes of JSON naming every tensor's dtype, shape and byte range, then the
// tensors' raw little-endian data. trmaml writes float32 tensors ("F32"),
// the dtype PyTorch loads by default, with string metadata.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
)

// Tensor is a named float32 tensor, row-major.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

// MaxHeader bounds the JSON header a file may declare (a model's names and
// shapes take a few kilobytes); a larger one is refused before it is read.
const MaxHeader = 16 << 20

type entry struct {
	Dtype       string   `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

// Encode writes tensors, in order, and metadata as a safetensors file.
func Encode(tensors []Tensor, metadata map[string]string) ([]byte, error) {
	header := map[string]any{}
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	var off int64
	for _, t := range tensors {
		n := 1
		for _, d := range t.Shape {
			n *= d
		}
		if n != len(t.Data) {
			return nil, fmt.Errorf("safetensors: tensor %s: shape %v holds %d values, got %d", t.Name, t.Shape, n, len(t.Data))
		}
		if _, dup := header[t.Name]; dup || t.Name == "__metadata__" {
			return nil, fmt.Errorf("safetensors: tensor name %q used twice or reserved", t.Name)
		}
		header[t.Name] = entry{Dtype: "F32", Shape: t.Shape, DataOffsets: [2]int64{off, off + 4*int64(n)}}
		off += 4 * int64(n)
	}
	h, err := json.Marshal(header)
	if err != nil {
		return nil, err
	}
	for len(h)%8 != 0 { // the format's alignment of the data
		h = append(h, ' ')
	}
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(h)))
	b.Write(h)
	for _, t := range tensors {
		for _, v := range t.Data {
			binary.Write(&b, binary.LittleEndian, math.Float32bits(v))
		}
	}
	return b.Bytes(), nil
}

// Decode reads a safetensors file (name is its path, for errors): its
// tensors sorted by their offsets, and its metadata. It refuses a file
// that is truncated, declares a header larger than MaxHeader, has a dtype
// other than F32, or tensors whose byte ranges overlap, leave gaps or do
// not fit their shapes, naming the file.
func Decode(name string, raw []byte) ([]Tensor, map[string]string, error) {
	if len(raw) < 8 {
		return nil, nil, fmt.Errorf("%s: truncated: %d bytes, a safetensors file starts with an 8-byte header length", name, len(raw))
	}
	n := binary.LittleEndian.Uint64(raw)
	if n > MaxHeader {
		return nil, nil, fmt.Errorf("%s: header of %d bytes: at most %d are allowed", name, n, MaxHeader)
	}
	if uint64(len(raw)-8) < n {
		return nil, nil, fmt.Errorf("%s: truncated: header of %d bytes, the file has %d after the length", name, n, len(raw)-8)
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+n], &header); err != nil {
		return nil, nil, fmt.Errorf("%s: header: %v", name, err)
	}
	data := raw[8+n:]
	var meta map[string]string
	var tensors []Tensor
	var ranges [][2]int64
	for key, v := range header {
		if key == "__metadata__" {
			if err := json.Unmarshal(v, &meta); err != nil {
				return nil, nil, fmt.Errorf("%s: __metadata__: %v (want a mapping of strings)", name, err)
			}
			continue
		}
		var e entry
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, nil, fmt.Errorf("%s: tensor %s: %v", name, key, err)
		}
		if e.Dtype != "F32" {
			return nil, nil, fmt.Errorf("%s: tensor %s: dtype %q: only F32 is supported", name, key, e.Dtype)
		}
		count := int64(1)
		for _, d := range e.Shape {
			if d < 0 || d > math.MaxInt32 {
				return nil, nil, fmt.Errorf("%s: tensor %s: shape %v", name, key, e.Shape)
			}
			count *= int64(d)
			if count > int64(len(data)) {
				return nil, nil, fmt.Errorf("%s: tensor %s: shape %v does not fit the file's %d bytes of data", name, key, e.Shape, len(data))
			}
		}
		b, end := e.DataOffsets[0], e.DataOffsets[1]
		if b < 0 || end < b || end-b != 4*count {
			return nil, nil, fmt.Errorf("%s: tensor %s: data_offsets %v for %d float32 values", name, key, e.DataOffsets, count)
		}
		if end > int64(len(data)) {
			return nil, nil, fmt.Errorf("%s: truncated: tensor %s ends at byte %d of the data, the file has %d", name, key, end, len(data))
		}
		t := Tensor{Name: key, Shape: e.Shape, Data: make([]float32, count)}
		for i := range t.Data {
			t.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[b+4*int64(i):]))
		}
		tensors, ranges = append(tensors, t), append(ranges, e.DataOffsets)
	}
	idx := make([]int, len(tensors))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return ranges[idx[a]][0] < ranges[idx[b]][0] })
	var pos int64
	sorted := make([]Tensor, len(tensors))
	for k, i := range idx {
		if ranges[i][0] != pos {
			what := "overlaps the one before"
			if ranges[i][0] > pos {
				what = "leaves a gap after the one before"
			}
			return nil, nil, fmt.Errorf("%s: tensor %s: data_offsets %v %s (at byte %d)", name, tensors[i].Name, ranges[i], what, pos)
		}
		pos, sorted[k] = ranges[i][1], tensors[i]
	}
	if pos != int64(len(data)) {
		return nil, nil, fmt.Errorf("%s: %d bytes of data after the last tensor", name, int64(len(data))-pos)
	}
	return slices.Clip(sorted), meta, nil
}
