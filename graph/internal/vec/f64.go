package vec

// kernels64 are the float64 loops of the small models' graphs (the sine
// MLP runs in float64): the plain loops, or AVX-512 ones (f64_amd64.go)
// where built and supported. They give the plain loops' results bit for
// bit (no fused multiply-adds).
type kernels64 struct {
	addTo     func(dst, src []float64)
	relu      func(dst, x []float64)
	mask      func(dst, x, v []float64)
	addScaled func(dst, x, y []float64, k float64)
	scale     func(dst, x []float64, k float64)
}

var (
	plain64 = kernels64{addToGo[float64], reluGo[float64], maskGo[float64], addScaledGo[float64], scaleGo[float64]}
	impl64  = plain64
)

func addScaledGo[T Float](dst, x, y []T, k T) {
	x, y = x[:len(dst)], y[:len(dst)]
	for i, v := range x {
		dst[i] = v + k*y[i]
	}
}

func scaleGo[T Float](dst, x []T, k T) {
	x = x[:len(dst)]
	for i, v := range x {
		dst[i] = k * v
	}
}
