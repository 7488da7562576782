package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// exitInterrupted is the exit status of a command that a signal stopped
// after checkpointing: "interrupted, resume me" (EX_TEMPFAIL of
// sysexits.h). Schedulers' scripts requeue a task that exits with it.
const exitInterrupted = 75

// interruptMessage is what the first SIGTERM, SIGINT or SIGUSR1 says for
// command cmd, or "" for a command with nothing to stop cleanly, which the
// signal ends at once as for any program (its files are written
// atomically). Only training checkpoints and exits with exitInterrupted.
func interruptMessage(cmd string) string {
	switch cmd {
	case "train", "resume", "experiment":
		return fmt.Sprintf("checkpointing at the current iteration, then exiting with status %d (run the same command again to resume)", exitInterrupted)
	case "serve":
		return "stopping the server"
	}
	return ""
}

// interruptContext is done at the first SIGTERM, SIGINT or SIGUSR1 (Slurm
// sends SIGUSR1 before a time limit with --signal=B:USR1@..., and SIGTERM on
// scancel and preemption), which it reports with message: the running
// training loops then checkpoint at their current iteration and return
// run.ErrInterrupted. A second SIGINT (Ctrl-C again) exits at once; every
// file is written atomically, so the last checkpoint stays whole.
func interruptContext(stderr io.Writer, message string) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1)
	go func() {
		sig := <-ch
		fmt.Fprintf(stderr, "\ntrmaml: %v: %s\n", sig, message)
		cancel()
		for sig := range ch {
			if sig == syscall.SIGINT {
				fmt.Fprintln(stderr, "trmaml: second interrupt: exiting now (the last checkpoint stays)")
				os.Exit(130)
			}
		}
	}()
	return ctx
}
