// Command federation-controller-manager runs the federation's controllers:
// cluster health, propagation of every federated type to the member
// clusters with status brought back, and the federated Services' DNS records.
package main

import (
	"os"

	"k8s.io/component-base/cli"

	"github.com/federation-v1/federation/federation-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewCommand()))
}
