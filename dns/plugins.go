package main

import (
	"github.com/coredns/coredns/core/dnsserver"

	// The plugins of this build, one import each; the order they run in is
	// directives below, not the order of these imports.
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/etcd"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

// directives lists the plugins of this build in the order CoreDNS chains
// them, which is the order of CoreDNS's own plugin.cfg: a plugin sees the
// effect of every plugin after it. The prometheus directive is the metrics
// package.
var directives = []string{
	"reload",
	"bind",
	"ready",
	"health",
	"prometheus",
	"errors",
	"log",
	"loadbalance",
	"cache",
	"etcd",
}

func init() {
	dnsserver.Directives = directives
}
