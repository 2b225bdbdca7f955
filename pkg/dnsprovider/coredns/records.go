package coredns

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/netip"
	"strings"

	"github.com/coredns/coredns/plugin/etcd/msg"
	"github.com/miekg/dns"

	"github.com/federation-v1/federation/pkg/dnsprovider"
)

// namePath is the etcd directory of a name's records:
// /skydns/com/example/svc/fed/default/nginx for nginx.default.fed.svc.example.com.
func namePath(prefix, name string) string {
	return msg.Path(dnsprovider.CanonicalName(name), strings.Trim(prefix, "/"))
}

// recordKey is the key of one rrdata of a name: the name's directory and the
// FNV-32a hash of the rrdata, in hex, as v1's CoreDNS provider wrote them.
func recordKey(dir, rrdata string) string {
	h := fnv.New32a()
	h.Write([]byte(rrdata))
	return fmt.Sprintf("%s/%x", dir, h.Sum32())
}

// record is one rrdata as stored: the etcd plugin's msg.Service with only
// host and TTL set.
type record struct {
	typ    dnsprovider.RecordType
	rrdata string
	ttl    int64
}

// encode returns the value stored for one rrdata, e.g. {"host":"1.2.3.4","ttl":180}.
func encode(r record) ([]byte, error) {
	return json.Marshal(msg.Service{Host: host(r.typ, r.rrdata), TTL: uint32(r.ttl)})
}

// decode reads a stored value. ok is false for values this provider does not
// write (SRV, TXT, MX, groups, not JSON, ...), which it leaves alone.
func decode(value []byte) (r record, ok bool) {
	var s msg.Service
	if err := json.Unmarshal(value, &s); err != nil {
		return record{}, false
	}
	if s.Host == "" || s.Port != 0 || s.Priority != 0 || s.Weight != 0 || s.Text != "" || s.Mail || s.TargetStrip != 0 || s.Group != "" {
		return record{}, false
	}
	r = record{rrdata: s.Host, ttl: int64(s.TTL)}
	switch typ, _ := s.HostType(); typ {
	case dns.TypeA:
		r.typ = dnsprovider.A
	case dns.TypeAAAA:
		r.typ = dnsprovider.AAAA
	default:
		r.typ = dnsprovider.CNAME
		r.rrdata = dnsprovider.CanonicalName(s.Host)
	}
	if ip, err := netip.ParseAddr(r.rrdata); err == nil {
		r.rrdata = ip.String()
	}
	return r, true
}

// host is the value of the "host" field for an rrdata: the canonical address,
// or the target name without its final dot.
func host(typ dnsprovider.RecordType, rrdata string) string {
	if typ == dnsprovider.CNAME {
		return strings.TrimSuffix(dnsprovider.CanonicalName(rrdata), ".")
	}
	if ip, err := netip.ParseAddr(rrdata); err == nil {
		return ip.String()
	}
	return rrdata
}

// nameOf is the inverse of namePath: the canonical name of a directory.
func nameOf(prefix, dir string) string {
	rest := strings.TrimPrefix(dir, "/"+strings.Trim(prefix, "/"))
	var labels []string
	for _, l := range strings.Split(rest, "/") {
		if l != "" {
			labels = append([]string{l}, labels...)
		}
	}
	return dnsprovider.CanonicalName(strings.Join(labels, "."))
}
