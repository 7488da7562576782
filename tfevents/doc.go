// Package tfevents writes TensorBoard event files, so that
// `tensorboard --logdir` shows a run's curves: TFRecord framing (each
// record its length, the masked CRC-32C of the length, the data and the
// masked CRC-32C of the data) around Event protocol buffers, the first
// naming the file version, the others each holding a Summary of scalar
// values at one step. The protocol buffers are encoded by hand: the few
// fields written here need no generated code.
package tfevents
