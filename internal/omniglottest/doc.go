// Package omniglottest gives tests Omniglot data on any clone: Root finds
// the real archives when the machine has them (and skips the test, saying
// where it looked and how to fetch them, when it does not), and
// WriteFixture makes a tiny synthetic copy in the archives' exact layout, so
// that the loader, the sampler and training run end to end everywhere.
//
// It does not import tasks/omniglot/data, so that package's own tests can
// use it; omniglot.Describe turns a fixture into the omniglot.Release that Load
// checks it against.
package omniglottest
