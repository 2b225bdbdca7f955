// Command kubefed creates a federation and adds clusters to it: init, join,
// unjoin, as in Kubernetes Federation v1, and runs local federations
// (start, stop, delete).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/federation-v1/federation/pkg/kubefed"
)

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := kubefed.NewCommand(os.Stdout, os.Stderr).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
