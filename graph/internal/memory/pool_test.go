package memory

import (
	"reflect"
	"runtime/metrics"
	"testing"

	"gorgonia.org/tensor"
)

// TestPoolOffHeap: a pool's float buffers come zeroed from outside Go's
// heap (the collector's target does not grow with them) and are recycled;
// without a pool, buffers are ordinary heap memory.
func TestPoolOffHeap(t *testing.T) {
	const n = 1 << 20
	for _, tt := range []struct {
		name    string
		dt      tensor.Dtype
		pool    bool
		offHeap bool
	}{
		{"float32 pooled", tensor.Float32, true, true},
		{"float64 pooled", tensor.Float64, true, true},
		{"float32 without a pool", tensor.Float32, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var p *Pool
			if tt.pool {
				p = NewPool()
			}
			heap := func() uint64 { // bytes allocated on the heap so far
				s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
				metrics.Read(s)
				return s[0].Value.Uint64()
			}
			before := heap()
			b := p.Get(tt.dt, tensor.Shape{n / 4, 4}, 0)
			allocated := int64(heap() - before)
			size := int64(n * tt.dt.Size())
			if tt.offHeap && allocated > size/8 || !tt.offHeap && allocated < size {
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
			if sum != 0 || b.Shape().TotalSize() != n {
				t.Errorf("new buffer: shape %v, sum %v, want %d zeros", b.Shape(), sum, n)
			}
			if !tt.pool {
				return
			}
			p.Put(b)
			if again := p.Get(tt.dt, tensor.Shape{n}, 0); again != b {
				t.Error("the pool did not recycle the buffer")
			}
		})
	}
}

// TestPoolBorrow: an op that borrows (one of an objective sharing another's
// pool) takes the beginning of the smallest larger free buffer of its dtype
// before it allocates, and allocates what it is told to borrow when nothing
// fits; its release returns the whole buffer.
func TestPoolBorrow(t *testing.T) {
	for _, tt := range []struct {
		name       string
		dt         tensor.Dtype
		size       int
		borrow     int
		wantWhole  int   // size of the buffer lent, 0 for a new one of size
		wantGrowth int64 // bytes
	}{
		{"exact size first", tensor.Float32, 64, 64, 64, 0},
		{"smallest larger", tensor.Float32, 65, 65, 128, 0},
		{"smaller than all", tensor.Float32, 1, 1, 64, 0},
		{"without borrowing", tensor.Float32, 65, 0, 0, 65 * 4},
		{"larger than all", tensor.Float32, 1024, 1024, 0, 1024 * 4},
		{"larger than all, a larger new one", tensor.Float32, 1024, 4096, 4096, 4096 * 4},
		{"other dtype", tensor.Float64, 65, 65, 0, 65 * 8},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPool()
			free := map[int]*tensor.Dense{}
			for _, n := range []int{64, 128, 512} {
				free[n] = p.Get(tensor.Float32, tensor.Shape{n}, 0)
			}
			for _, b := range free {
				p.Put(b)
			}
			before := p.bytes
			b := p.Get(tt.dt, tensor.Shape{tt.size, 1}, tt.borrow)
			if got := b.Shape().TotalSize(); got != tt.size || b.Dtype() != tt.dt {
				t.Fatalf("got %v of %v, want %d values of %v", b.Shape(), b.Dtype(), tt.size, tt.dt)
			}
			if growth := p.bytes - before; growth != tt.wantGrowth {
				t.Errorf("the pool grew by %d bytes, want %d", growth, tt.wantGrowth)
			}
			if whole, ok := free[tt.wantWhole]; ok && &b.Float32s()[0] != &whole.Float32s()[0] {
				t.Errorf("not the beginning of the free buffer of %d", tt.wantWhole)
			}
			p.Put(b)
			sizes := map[int]int{}
			for k, l := range p.free {
				sizes[k.size] += len(l)
			}
			want := map[int]int{64: 1, 128: 1, 512: 1}
			if tt.wantWhole == 0 {
				want[tt.size]++
			} else if _, ok := free[tt.wantWhole]; !ok {
				want[tt.wantWhole]++
			}
			if !reflect.DeepEqual(sizes, want) || len(p.lent) != 0 {
				t.Errorf("after put: free buffers by size %v and %d lent, want %v and 0", sizes, len(p.lent), want)
			}
		})
	}
}

// TestPoolLendsParts: borrowers fill one larger buffer part after part
// (each aligned to 16 values) before they take another, and the buffer is
// free again only when every part is back.
func TestPoolLendsParts(t *testing.T) {
	p := NewPool()
	whole := p.Get(tensor.Float32, tensor.Shape{128}, 0)
	p.Put(whole)
	a := p.Get(tensor.Float32, tensor.Shape{60}, 60)
	b := p.Get(tensor.Float32, tensor.Shape{3, 20}, 60)
	c := p.Get(tensor.Float32, tensor.Shape{10}, 10) // no room left: a new buffer
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
