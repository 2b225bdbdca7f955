// Command memberenv starts and stops the member-cluster environment that
// tests, demos and benchmarks run against (make up / make down).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := newRootCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "memberenv:", err)
		os.Exit(1)
	}
}
