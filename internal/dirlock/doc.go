// Package dirlock gives one process at a time a directory to write: an
// exclusive flock(2) on a lock file inside it. The kernel releases the lock
// when its holder exits, however it exits, so a lock left by a killed
// process never blocks; the file also records who holds it (pid, host,
// command, start time), so that a refusal names the holder.
package dirlock
