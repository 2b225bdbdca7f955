// Command federation-agent runs in a member cluster that the federation
// cannot dial: it dials out to the federation apiserver, holds its
// cluster's tunnel open, and answers the federation's requests through it
// with its own identity in the member.
package main

import (
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/federation-v1/federation/federation-agent/app"
)

func main() {
	cmd := app.NewCommand()
	cmd.SetContext(genericapiserver.SetupSignalContext())
	os.Exit(cli.Run(cmd))
}
