package apiserver

import (
	"k8s.io/apimachinery/pkg/util/sets"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
)

// LongRunning says which requests the request timeout and the in-flight
// limits leave alone: watches, as on every apiserver, and the requests that
// hold a connection open by design, as kube-apiserver's list has them, with
// the agents' tunnels (clusters/NAME/tunnel) and the proxy to members
// through them (clusters/NAME/proxy).
var LongRunning = genericfilters.BasicLongRunningRequestCheck(
	sets.NewString("watch", "proxy"),
	sets.NewString("attach", "exec", "proxy", "log", "portforward", "tunnel"),
)
