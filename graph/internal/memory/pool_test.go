package memory

import (
	"reflect"
	"runtime/metrics"
	"testing"

	"gorgonia.org/tensor"
)

// TestPoolOffHeap: a pool's float buffers come zeroed from outside Go's
// heap (the collector's target does not grow with them) and are recycled.
func TestPoolOffHeap(t *testing.T) {
	const n = 1 << 20
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			p := NewPool()
			heap := func() uint64 { // bytes allocated on the heap so far
				s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
				metrics.Read(s)
				return s[0].Value.Uint64()
			}
			before := heap()
			b := p.Get(dt, n)
			if allocated, size := int64(heap()-before), int64(n*dt.Size()); allocated > size/8 {
				t.Errorf("%d bytes allocated on the heap for a buffer of %d", allocated, size)
			}
			var sum float64
			switch d := b.Data().(type) {
			case []float32:
				for i := range d {
					sum += float64(d[i])
					d[i] = 1
				}
			case []float64:
				for i := range d {
					sum += d[i]
					d[i] = 1
				}
			}
			if sum != 0 || b.Shape().TotalSize() != n || b.Dtype() != dt {
				t.Errorf("new buffer: %v of shape %v, sum %v, want %d zeros of %v", b.Dtype(), b.Shape(), sum, n, dt)
			}
			p.Put(b)
			if again := p.Get(dt, n); again != b {
				t.Error("the pool did not recycle the buffer")
			}
		})
	}
}

// TestPoolGet: a request takes a free buffer of its size, else the
// beginning of the smallest larger free buffer of its dtype, else a new
// buffer, which replaces the (smaller) free ones of its dtype; Bytes is the
// most the pool held at once.
func TestPoolGet(t *testing.T) {
	for _, tt := range []struct {
		name      string
		dt        tensor.Dtype
		size      int
		wantWhole int   // size of the free buffer lent, 0 for a new one
		wantPeak  int64 // bytes
		wantFree  map[int]int
	}{
		{"exact size first", tensor.Float32, 64, 64, 704 * 4, map[int]int{64: 1, 128: 1, 512: 1}},
		{"smallest larger", tensor.Float32, 65, 128, 704 * 4, map[int]int{64: 1, 128: 1, 512: 1}},
		{"smaller than all", tensor.Float32, 1, 64, 704 * 4, map[int]int{64: 1, 128: 1, 512: 1}},
		{"larger than all: replaces them", tensor.Float32, 1024, 0, 1024 * 4, map[int]int{1024: 1}},
		{"other dtype", tensor.Float64, 65, 0, 704*4 + 65*8, map[int]int{64: 1, 128: 1, 512: 1, 65: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPool()
			free := map[int]*tensor.Dense{}
			for _, n := range []int{64, 128, 512} {
				free[n] = p.Get(tensor.Float32, n)
			}
			for _, b := range free {
				p.Put(b)
			}
			b := p.Get(tt.dt, tt.size)
			if got := b.Shape().TotalSize(); got != tt.size || b.Dtype() != tt.dt {
				t.Fatalf("got %v of %v, want %d values of %v", b.Shape(), b.Dtype(), tt.size, tt.dt)
			}
			if whole, ok := free[tt.wantWhole]; ok && &b.Float32s()[0] != &whole.Float32s()[0] {
				t.Errorf("not the beginning of the free buffer of %d", tt.wantWhole)
			}
			if _, old := free[tt.wantWhole]; !old && len(p.lent) != 0 {
				t.Errorf("a new buffer was lent")
			}
			p.Put(b)
			if got := p.Bytes(); got != tt.wantPeak {
				t.Errorf("peak %d bytes, want %d", got, tt.wantPeak)
			}
			sizes, held := map[int]int{}, int64(0)
			for k, l := range p.free {
				if len(l) > 0 {
					sizes[k.size] += len(l)
				}
				for _, b := range l {
					held += int64(b.MemSize())
				}
			}
			if !reflect.DeepEqual(sizes, tt.wantFree) || len(p.lent) != 0 || held != p.bytes || len(p.mapped) != len(p.Free()) {
				t.Errorf("after put: free buffers by size %v (%d bytes, %d mapped), %d lent; want %v, %d bytes counted, 0 lent",
					sizes, held, len(p.mapped), len(p.lent), tt.wantFree, p.bytes)
			}
		})
	}
}

// TestPoolLendsParts: requests fill one larger buffer part after part
// (each aligned to 16 values) before they take another, and the buffer is
// free again only when every part is back.
func TestPoolLendsParts(t *testing.T) {
	p := NewPool()
	whole := p.Get(tensor.Float32, 128)
	p.Put(whole)
	a := p.Get(tensor.Float32, 60)
	b := p.Get(tensor.Float32, 60)
	c := p.Get(tensor.Float32, 10) // no room left: a new buffer
	data := whole.Float32s()
	if &a.Float32s()[0] != &data[0] || &b.Float32s()[0] != &data[64] || b.Shape().TotalSize() != 60 {
		t.Fatalf("parts at %p and %p (shape %v), want the buffer's values 0 and 64", &a.Float32s()[0], &b.Float32s()[0], b.Shape())
	}
	if &c.Float32s()[0] == &data[0] || len(p.open) != 1 {
		t.Fatalf("a part of a full buffer was lent again (%d open)", len(p.open))
	}
	p.Put(a)
	if len(p.free[poolKey{tensor.Float32, 128}]) != 0 {
		t.Fatal("the buffer came back while a part was still lent")
	}
	p.Put(b)
	if l := p.free[poolKey{tensor.Float32, 128}]; len(l) != 1 || l[0] != whole || len(p.open) != 0 || len(p.lent) != 0 {
		t.Fatalf("after both parts: free %v, %d open, %d lent", l, len(p.open), len(p.lent))
	}
}
