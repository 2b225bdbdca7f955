// Package dnsrecords computes the DNS records of a federated Service and
// applies them to a DNS zone, as Federation v1 did (spec §6).
//
// For federation fed, domain example.com and Service default/nginx it
// manages three kinds of names:
//
//	nginx.default.fed.svc.us-east1-b.us-east1.example.com.  one per zone of a member cluster
//	nginx.default.fed.svc.us-east1.example.com.             one per region
//	nginx.default.fed.svc.example.com.                      global
//
// Each holds the A (and AAAA) records of the healthy load-balancer addresses
// of the member clusters in it. An empty zone name is a CNAME to its region
// name, an empty region name a CNAME to the global name, and an empty global
// name has no record. Desired computes the record sets without I/O (but for
// the injected resolver of hostname ingress); Apply writes the difference.
//
// It owns the names and records only: the service DNS controller
// (pkg/controllers/servicedns) decides when to call it. It must not import
// a controller or the apiserver.
package dnsrecords
