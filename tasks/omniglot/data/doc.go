// Package data is the data side of the Omniglot task family (package
// tasks/omniglot, the paper's image experiment): every alphabet is a task,
// an instance is an N-way K-shot problem over N distinct characters of one
// alphabet. Importing it registers the family's configs.DataSide (its task
// sets and "trmaml data omniglot"); package run imports it, the readers of
// run directories need not.
//
// Data. A data root (ResolveRoot: the -data/-dir flag, else the config,
// else $TRMAML_DATA, else os.UserCacheDir()/trmaml) holds omniglot/ with
// images_background.zip and images_evaluation.zip as released in the
// python/ folder of github.com/brendenlake/omniglot, or their extracted
// folders. Download fetches them (trmaml data omniglot), resuming an
// interrupted transfer and verifying the content before moving them into
// place; Verify checks a root; List reads the alphabets without decoding.
//
// Loading. Load checks the counts (964 characters / 19,280 images and
// 659 / 13,180) and the content SHA-256 of the published release, or of the
// Release given in Options (Describe makes one for other data in the same
// layout, such as the tests' synthetic fixture), then decodes every 105x105
// PNG, shrinks it to Options.Size with Options.Resize (Bilinear by default:
// x/image/draw's BiLinear kernel, a tent filter widened to the scale
// factor, antialiased and non-negative; Lanczos and Nearest reproduce
// Pillow's, the latter being what the paper's code feeds its network) and
// stores ink 255 / background 0 in one byte per pixel, each row from its
// first to its last ink pixel (7.8 MB at 28x28 instead of 25 MB). The
// decoded arrays are cached in ROOT/omniglot/decoded.cache (decoded-NAME.cache
// for another resize), keyed by the content hash and the resize settings
// and written atomically; a cache with another key, or damaged, is rebuilt. A read-only root still loads (the
// failed cache write is in Dataset.Info.CacheErr).
//
// Tasks. NewTaskSet makes a Split (Train: the 25 largest background
// alphabets, Validation: the 5 smallest, Test: the 20 evaluation alphabets)
// into a metalearn.TaskSet whose Sample fills a batch row with the layout
// graph.CNN reads: Size*Size inputs per image, ink 1.0, background 0.0, and
// one-hot targets of length N. Mass carries the relative C(Z_i, N), so
// MAML's empirical distribution draws alphabets by their number of distinct
// N-character problems.
package data
