// Package data holds the task families of the experiments as
// metalearn.TaskSet implementations. It provides the sinusoid regression
// family of the TR-MAML paper, in which tasks are amplitude ranges and the
// meta-training set deliberately under-represents some of them; the Omniglot
// classification family is in data/omniglot.
package data
