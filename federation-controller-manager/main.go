// Command federation-controller-manager runs the federation's controllers:
// cluster health, propagation of every federated type to the member
// clusters with status brought back, and the federated Services' DNS records.
package main

import (
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/federation-v1/federation/federation-controller-manager/app"
)

func main() {
	// SIGTERM or SIGINT stops the controllers and releases the leader
	// lease; a second signal exits at once.
	cmd := app.NewCommand()
	cmd.SetContext(genericapiserver.SetupSignalContext())
	os.Exit(cli.Run(cmd))
}
