// Package atomicfile writes files so that readers, and a crash, only ever
// see the old content or the complete new content: the data goes to a
// temporary file beside the target, is synced, and is renamed over it, and
// the directory is synced so that the rename itself is durable.
package atomicfile
