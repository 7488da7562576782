package data_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	"github.com/trmaml/trmaml/metalearn"
	omniglot "github.com/trmaml/trmaml/tasks/omniglot/data"
)

// Load the data, make the meta-training alphabets into 5-way 1-shot tasks
// with 10 queries per class, and sample a meta-batch of 4 instances drawn
// as MAML does (alphabet i with probability proportional to Mass(i)).
func Example() {
	root, err := omniglot.ResolveRoot("", "") // $TRMAML_DATA or the user cache directory
	if err != nil {
		log.Fatal(err)
	}
	d, err := omniglot.Load(root.Dir, omniglot.Options{Size: 28})
	if err != nil {
		log.Fatal(root.Annotate(err))
	}
	if d.Info.CacheErr != nil {
		log.Printf("decoded images not cached: %v", d.Info.CacheErr)
	}
	spec := omniglot.Spec{Ways: 5, Shots: 1, Queries: 10, Rotate: true}
	train, err := omniglot.NewTaskSet(d, omniglot.Train, spec)
	if err != nil {
		log.Fatal(err)
	}
	in, out := train.Dims() // 784, 5
	batch := metalearn.NewBatch(4, spec.Ways*spec.Shots, spec.Ways*spec.Queries, in, out)
	rng := rand.New(rand.NewPCG(1, 2))
	total := 0.0
	for i := range train.Len() {
		total += train.Mass(i)
	}
	for row := range batch.Tasks {
		u, i := rng.Float64()*total, 0
		for ; i < train.Len()-1 && u >= train.Mass(i); i++ {
			u -= train.Mass(i)
		}
		train.Sample(i, rng, batch, row)
		fmt.Println(train.Name(i))
	}
}
