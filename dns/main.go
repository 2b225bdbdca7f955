// Command federation-dns is the DNS server of the federation: a CoreDNS build
// with only the plugins needed to serve the federation zone from etcd, where
// the federation controller manager writes the service records.
//
// It takes CoreDNS's flags (-conf Corefile, -dns.port, -plugins, -version).
package main

import "github.com/coredns/coredns/coremain"

func main() {
	coremain.Run()
}
