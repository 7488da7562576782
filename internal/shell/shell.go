// Package shell quotes words for a POSIX shell, so that every command
// trmaml prints for a shell (in a refusal's advice, a dry run's submit
// commands) or writes into a script can be pasted or run as is, whatever
// the paths hold.
package shell

import "strings"

// Quote quotes s for a POSIX shell when it holds anything but safe
// characters.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
