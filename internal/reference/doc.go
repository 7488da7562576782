// Package reference is an independent, deliberately plain float64
// implementation of the project's models and of the MAML objective, written
// with the standard library only: the fully connected regressor (MLP, mean
// squared error) and MAML's convolutional classifier (CNN: conv, batch norm,
// ReLU, max-pool, linear, softmax cross-entropy; graph.CNN's layout).
// Tests use it as ground truth for the gorgonia graphs: it shares no code with
// them, favours clarity over speed and computes gradients by hand-written
// backpropagation that is itself checked against central finite differences.
package reference
