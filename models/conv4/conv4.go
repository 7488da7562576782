// Package conv4 is MAML's convolutional classifier (model.kind conv4):
// blocks of [3x3 convolution, batch norm, ReLU, pooling] and a linear head,
// the network of the paper's Omniglot experiments. Its config section is
// model.conv4; the engine is graph.CNN.
package conv4

import (
	"fmt"

	"github.com/trmaml/trmaml/configs"
	"gopkg.in/yaml.v3"
)

// Name is the model's model.kind value.
const Name = "conv4"

// MaxFilters bounds model.conv4.filters (paper: 64).
const MaxFilters = 1024

// Config is the section model.conv4.
type Config struct {
	// Filters >= 1 per convolution (paper: 64 on Omniglot, 32 on
	// mini-ImageNet).
	Filters int `yaml:"filters"`
	// Blocks >= 1 (paper: 4); with max pooling each halves the image,
	// which must stay at least 1x1 (28 -> 14 -> 7 -> 3 -> 1).
	Blocks int `yaml:"blocks"`
	// Pool is each block's downsampling: "max" (2x2 max-pool, stride 2),
	// "stride" (the convolution itself with stride 2, MAML's no-pool
	// variant) or "none".
	Pool string `yaml:"pool"`
	// BatchNorm is each block's normalisation: "adapt" (its scale and shift
	// adapted in the inner loop too), "fixed" (meta-learned only, the
	// paper's) or "off".
	BatchNorm string `yaml:"batch_norm"`
	// Hidden, if > 0, is the width of a hidden ReLU layer of the head
	// between the last block and the class scores; 0 maps the last block
	// straight to the scores.
	Hidden int `yaml:"hidden"`
}

// The values of Pool and BatchNorm.
var (
	Pools      = []string{"max", "stride", "none"}
	BatchNorms = []string{"adapt", "fixed", "off"}
)

// Model is the four-block CNN.
type Model struct{}

func init() { configs.RegisterModel(Model{}) }

// Name implements configs.Model.
func (Model) Name() string { return Name }

// NewSection implements configs.Model: the paper's Omniglot network.
func (Model) NewSection() any {
	return &Config{Filters: 64, Blocks: 4, Pool: "max", BatchNorm: "fixed"}
}

// Section is c's model.conv4 section.
func Section(c configs.Config) *Config { return c.Model.Sections[Name].(*Config) }

// Check implements configs.Model: the ranges, and a pooling chain that
// leaves the image at least 1x1 (when the family knows the image's size
// before reading its data; otherwise the engine refuses it at build time).
func (Model) Check(c configs.Config, io configs.IO, k *configs.Checker) {
	s := Section(c)
	k.Between("model.conv4.filters", s.Filters, 1, MaxFilters)
	k.OneOf("model.conv4.pool", s.Pool, Pools...)
	k.OneOf("model.conv4.batch_norm", s.BatchNorm, BatchNorms...)
	k.Between("model.conv4.hidden", s.Hidden, 0, MaxFilters*16)
	if s.Blocks < 1 {
		k.Fail("model.conv4.blocks", s.Blocks, "must be >= 1")
		return
	}
	if io.Height < 1 || io.Width < 1 {
		return
	}
	h, w := io.Height, io.Width
	for b := 1; b <= min(s.Blocks, 64); b++ {
		h, w = shrink(s.Pool, h), shrink(s.Pool, w)
		if h < 1 || w < 1 {
			k.Fail("model.conv4.blocks", s.Blocks, "leaves no image: %dx%d inputs under %d blocks of %s pooling shrink to nothing at block %d (at most %d blocks)",
				io.Height, io.Width, s.Blocks, s.Pool, b, b-1)
			return
		}
	}
}

// shrink is the side of a block's output for a side n of its input:
// max-pooling halves it (rounding down), a stride-2 convolution with
// padding 1 halves it rounding up, none keeps it.
func shrink(pool string, n int) int {
	switch pool {
	case "stride":
		return (n + 1) / 2
	case "none":
		return n
	}
	return n / 2
}

// Memory implements configs.Model. The graphs' large values are the
// activations of every image: per block its convolution output at that
// block's resolution, per filter, and their gradients. A support image
// costs more than a query image in second order (its activations are
// differentiated twice by the meta-gradient), so each counts with its own
// factor, in units of one image's activations. They are fitted to the
// buffers the graphs allocate (graph's TestMemoryEstimateBoundsGraphs, the
// paper's 28x28 network, 5-way, 1 to 5 shots, 1 and 3 inner steps): in the
// default build per query image 2.1-2.4 in training, per support image 2.0
// in second order at one inner step (1.4 in first order), about 2 more per
// further step in second order, rounded up to 2.25, 2.5, 1.5 and 2; in
// evaluation 3.2 and 0.75. The fast build's fused first block (float32 with
// vector kernels) needs about 0.6 per training query image, so there the
// estimate is up to 2.5 times the buffers. The two graphs share their
// buffers when their sizes agree (graph.Objective.ShareBuffers).
func (Model) Memory(c configs.Config, io configs.IO) configs.MemoryEstimate {
	n := Section(c)
	float := 8.0
	if c.Model.Dtype == "float32" {
		float = 4
	}
	perImage, h, w := 0.0, io.Height, io.Width
	for range min(n.Blocks, 62) {
		perImage += float64(n.Filters * h * w)
		h, w = shrink(n.Pool, h), shrink(n.Pool, w)
	}
	perImage += float64(io.Inputs()) // the input
	ways := io.Outputs
	head := float64(h*w*n.Filters+1) * float64(ways)
	if n.Hidden > 0 {
		head = float64(h*w*n.Filters+1)*float64(n.Hidden) + float64(n.Hidden+1)*float64(ways)
	}
	params := 9*float64(n.Filters)*float64(n.Filters+1)*float64(n.Blocks) + 9*float64(n.Filters)*float64(max(io.Channels, 1)-1) + head
	graph := func(tasks, query, steps int, supportFactor, queryFactor float64) float64 {
		images := float64(tasks) * float64(ways) * (supportFactor*float64(c.Task.Support) + queryFactor*float64(query))
		return float * (images*perImage + params*float64(tasks*(steps+2)))
	}
	// Exact second order keeps every inner step's support activations for
	// the meta-gradient: about 2 more per support image and extra step.
	support := 1.5
	if c.Order != "first" {
		support = 2.5 + 2*float64(c.Inner.Steps-1)
	}
	instances := max(c.Eval.Instances, c.Eval.TrainInstances, c.Eval.FinalInstances)
	return configs.MemoryEstimate{
		TrainGraph:   graph(c.Meta.Batch, c.Task.Query, c.Inner.Steps, support, 2.25),
		EvalGraph:    graph(c.Eval.Batch, c.Eval.Query, c.EvalSteps(), 3.2, 0.75) + 8*float64(instances),
		SharedGraphs: c.Eval.Batch == c.Meta.Batch && c.Eval.Query == c.Task.Query && c.EvalSteps() == c.Inner.Steps,
	}
}

// Shrink implements configs.Model: one filter.
func (Model) Shrink(c configs.Config) []configs.Shrunk {
	s := *Section(c)
	small := s
	small.Filters = 1
	return []configs.Shrunk{{Path: "model.conv4.filters", Value: s.Filters, Section: &small}}
}

// FLOPsPerCPUSecond implements configs.Rated. The counted arithmetic is
// the products; the batch-norm and pooling passes over the first block's
// activations, bound by memory bandwidth, are not counted, and weigh more
// the larger the image: measured in the fast build (bench_cnn.sh, one
// core), 116-128 GFLOP per CPU-second at 28x28x1 with 64 filters
// (Omniglot) and 44-59 at 84x84x3 with 32 filters (MAML's mini-ImageNet
// network). Rounded down for slower CPUs: 80 up to 32x32 pixels, 40 above.
func (Model) FLOPsPerCPUSecond(_ configs.Config, io configs.IO) float64 {
	if io.Height*io.Width <= 32*32 {
		return 80e9
	}
	return 40e9
}

// CPUs implements configs.Model: the convolutions use two CPUs (the
// measured timings are on 2 cores).
func (Model) CPUs(configs.Config) int { return 2 }

// Legacy implements configs.LegacyModel: the section was model.cnn, with
// filters, blocks and adapt_bn (true: batch_norm adapt, false: fixed).
func (Model) Legacy(key string, value *yaml.Node) ([]*yaml.Node, bool) {
	if key != "cnn" {
		return nil, false
	}
	if value.Kind != yaml.MappingNode {
		return []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: value.Line}, value}, true
	}
	var out []*yaml.Node
	for i := 0; i+1 < len(value.Content); i += 2 {
		k, v := value.Content[i], value.Content[i+1]
		if k.Value == "adapt_bn" && v.Kind == yaml.ScalarNode && (v.Value == "true" || v.Value == "false") {
			bn := "fixed"
			if v.Value == "true" {
				bn = "adapt"
			}
			k = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "batch_norm", Line: k.Line}
			v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: bn, Line: v.Line}
		}
		out = append(out, k, v)
	}
	return out, true
}

// Tensors implements configs.Exporter with the names of a PyTorch module
// with blocks[l].conv (Conv2d 3x3, padding 1, stride 2 under pool stride),
// blocks[l].bn (BatchNorm2d with batch statistics; absent under batch_norm
// off), then hidden (Linear, with hidden > 0) and head (Linear): kernels
// [F, Cin, 3, 3] (OIHW) from graph.CNN's [kh][kw][cin][f], and the first
// linear layer's weight [out, F*h*w] over the last block's output flattened
// as PyTorch flattens NCHW, (c, h, w), from graph.CNN's (h, w, c) rows.
// Pooling holds no tensors: a reader takes it from the model section of
// the export's metadata.
func (Model) Tensors(c configs.Config, io configs.IO, w []float64) ([]configs.Tensor, error) {
	s := Section(c)
	var out []configs.Tensor
	take := func(n int) ([]float64, error) {
		if len(w) < n {
			return nil, fmt.Errorf("conv4: %d parameters left, the next tensor has %d", len(w), n)
		}
		v := w[:n]
		w = w[n:]
		return v, nil
	}
	vector := func(name string, n int) error {
		v, err := take(n)
		if err == nil {
			out = append(out, configs.Tensor{Name: name, Shape: []int{n}, Data: append([]float64(nil), v...)})
		}
		return err
	}
	cin, h, wd := io.Channels, io.Height, io.Width
	f := s.Filters
	names := []string{"conv.bias", "bn.weight", "bn.bias"}
	if s.BatchNorm == "off" {
		names = names[:1]
	}
	for l := range s.Blocks {
		k, err := take(9 * cin * f)
		if err != nil {
			return nil, err
		}
		oihw := make([]float64, len(k))
		for kh := range 3 {
			for kw := range 3 {
				for ci := range cin {
					for o := range f {
						oihw[((o*cin+ci)*3+kh)*3+kw] = k[((kh*3+kw)*cin+ci)*f+o]
					}
				}
			}
		}
		p := fmt.Sprintf("blocks.%d.", l)
		out = append(out, configs.Tensor{Name: p + "conv.weight", Shape: []int{f, cin, 3, 3}, Data: oihw})
		for _, name := range names {
			if err := vector(p+name, f); err != nil {
				return nil, err
			}
		}
		cin, h, wd = f, shrink(s.Pool, h), shrink(s.Pool, wd)
	}
	first, d := "head", h*wd*f
	outs := io.Outputs
	if s.Hidden > 0 {
		first, outs = "hidden", s.Hidden
	}
	lin, err := take(d * outs)
	if err != nil {
		return nil, err
	}
	weight := make([]float64, len(lin))
	for y := range h {
		for x := range wd {
			for ch := range f {
				for o := range outs {
					weight[o*d+(ch*h+y)*wd+x] = lin[((y*wd+x)*f+ch)*outs+o]
				}
			}
		}
	}
	out = append(out, configs.Tensor{Name: first + ".weight", Shape: []int{outs, d}, Data: weight})
	if err := vector(first+".bias", outs); err != nil {
		return nil, err
	}
	if s.Hidden == 0 {
		return out, nil
	}
	ways := io.Outputs
	lin, err = take(s.Hidden * ways)
	if err != nil {
		return nil, err
	}
	weight = make([]float64, len(lin))
	for i := range s.Hidden {
		for o := range ways {
			weight[o*s.Hidden+i] = lin[i*ways+o]
		}
	}
	out = append(out, configs.Tensor{Name: "head.weight", Shape: []int{ways, s.Hidden}, Data: weight})
	return out, vector("head.bias", ways)
}
