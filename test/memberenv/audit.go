package memberenv

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// federationWritesPolicy has each member's API server log the writes of the
// federation's accounts (every account kubefed join makes lives in the
// member's federation-system), and every request of theirs to pods, their
// logs and streams, Secrets, ConfigMaps and nodes (what the federation's proxy could
// reach for a tenant), and nothing else: tests count at the members what
// the federation wrote there, and what its proxy sent.
const federationWritesPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  userGroups: ["system:serviceaccounts:federation-system"]
  resources:
  - group: ""
    resources: [pods, pods/log, pods/exec, pods/attach, pods/portforward, secrets, configmaps, nodes]
- level: Metadata
  userGroups: ["system:serviceaccounts:federation-system"]
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`

// auditFlags are the member API server's flags of that log.
func (m *Member) auditFlags() []string {
	return []string{
		"--audit-policy-file=" + m.path("audit-policy.yaml"),
		"--audit-log-path=" + m.path(federationWritesLog),
		"--audit-log-maxbackup=1",
	}
}

// federationWritesLog is the audit log's name in the member's folder.
const federationWritesLog = "federation-writes.audit.log"

func (m *Member) writeAuditPolicy() error {
	return os.WriteFile(m.path("audit-policy.yaml"), []byte(federationWritesPolicy), 0o600)
}

// FederationWrites are the writes the federation's accounts made in the
// member so far, as its API server logged them (create, update, patch,
// delete), oldest first; not those its proxy made for a tenant.
func (m *Member) FederationWrites() ([]auditv1.Event, error) {
	events, err := m.federationRequests()
	return slices.DeleteFunc(events, func(e auditv1.Event) bool {
		return e.ImpersonatedUser != nil || !slices.Contains(writeVerbs, e.Verb)
	}), err
}

var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// ProxiedRequests are the requests the federation's proxy sent to the
// member for tenants (its account impersonating the proxy user) to pods,
// their logs and streams, Secrets, ConfigMaps and nodes, oldest first, as
// "verb URI as USER for CALLER".
func (m *Member) ProxiedRequests() ([]string, error) {
	events, err := m.federationRequests()
	var out []string
	for _, e := range events {
		if e.ImpersonatedUser != nil {
			out = append(out, fmt.Sprintf("%s %s as %s for %v", e.Verb, e.RequestURI, e.ImpersonatedUser.Username, e.ImpersonatedUser.Extra["federation.kubernetes.io/caller"]))
		}
	}
	return out, err
}

// federationRequests are the requests of the federation's accounts the
// member logged.
func (m *Member) federationRequests() ([]auditv1.Event, error) {
	f, err := os.Open(m.path(federationWritesLog))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var events []auditv1.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s: %w", m.path(federationWritesLog), err)
		}
		events = append(events, e)
	}
	return events, sc.Err()
}

// FederationWriteCounts counts the federation's writes each member of
// clusters logged so far: a mark for FederationWritesSince.
func (e *Environment) FederationWriteCounts(clusters []string) (map[string]int, error) {
	counts := map[string]int{}
	for _, c := range clusters {
		m := e.Member(c)
		if m == nil {
			return nil, fmt.Errorf("memberenv: no cluster named %q", c)
		}
		events, err := m.FederationWrites()
		if err != nil {
			return nil, err
		}
		counts[c] = len(events)
	}
	return counts, nil
}

// FederationWritesSince lists the federation's writes the members logged
// after the counts in mark ("cluster: verb resource namespace/name"), but
// for those to objects named in except.
func (e *Environment) FederationWritesSince(clusters []string, mark map[string]int, except ...string) ([]string, error) {
	var out []string
	for _, c := range clusters {
		events, err := e.Member(c).FederationWrites()
		if err != nil {
			return nil, err
		}
		for _, ev := range events[min(mark[c], len(events)):] {
			switch {
			case ev.ObjectRef == nil:
				out = append(out, c+": "+ev.Verb+" "+ev.RequestURI)
			case !slices.Contains(except, ev.ObjectRef.Name):
				out = append(out, fmt.Sprintf("%s: %s %s %s/%s", c, ev.Verb, ev.ObjectRef.Resource, ev.ObjectRef.Namespace, ev.ObjectRef.Name))
			}
		}
	}
	return out, nil
}
