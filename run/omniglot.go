package run

import "github.com/trmaml/trmaml/configs"

// Datasets holds the data loaded by the runs given it (Options.Datasets),
// such as Omniglot's decoded images, one per data root, image size, resize
// and release: the runs of an experiment share it (sampling only reads
// it). The zero value is empty and ready; it is safe for concurrent use.
type Datasets = configs.DataCache
