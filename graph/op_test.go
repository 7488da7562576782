package graph

import (
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
			var p *bufferPool
			if tt.pool {
				p = &bufferPool{free: map[poolKey][]*tensor.Dense{}}
			}
			heap := func() uint64 { // bytes allocated on the heap so far
				s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
				metrics.Read(s)
				return s[0].Value.Uint64()
			}
			before := heap()
			b := p.get(tt.dt, tensor.Shape{n / 4, 4})
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
			p.put(b)
			if again := p.get(tt.dt, tensor.Shape{n}); again != b {
				t.Error("the pool did not recycle the buffer")
			}
		})
	}
}
