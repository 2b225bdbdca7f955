// Command federation-apiserver serves the federation API: the Kubernetes
// types that are federated and the federation/v1beta1 Cluster.
package main

import (
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/federation-v1/federation/federation-apiserver/app"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	os.Exit(cli.Run(app.NewCommand(ctx)))
}
