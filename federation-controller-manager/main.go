// Command federation-controller-manager runs the federation's controllers:
// cluster health now, propagation, status and DNS as they are built.
package main

import (
	"os"

	"k8s.io/component-base/cli"

	"github.com/federation-v1/federation/federation-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewCommand()))
}
