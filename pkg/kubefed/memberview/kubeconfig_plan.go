package memberview

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// What kubefed kubeconfig did with a member's context.
const (
	contextCreated   = "created"
	contextUpdated   = "updated"
	contextUnchanged = "unchanged"
	contextRemoved   = "removed"
	// contextStale is a context of a cluster that is gone, kept without --prune.
	contextStale = "stale"
)

// contextChange is what kubefed kubeconfig did with one member's context.
type contextChange struct {
	// name is the context's (and its cluster entry's) name, FED/CLUSTER.
	name    string
	cluster string
	action  string
	server  string
}

// memberContextName is the name of the context, and of its cluster entry,
// of member cluster in the federation of kubeconfig context fed.
func memberContextName(fed, cluster string) string { return fed + "/" + cluster }

// planMemberContexts changes cfg, the user's kubeconfig, so that it has a
// context FED/NAME for each of members: its cluster entry FED/NAME has the
// federation's server with NAME's proxy path and the federation cluster's
// CA and TLS settings; its user is the federation context's own user entry
// (no credential is copied); its namespace is the federation context's
// when the context is created, and whatever the user set later when it
// exists. existing are the federation's clusters, nil when they could not
// be listed; a context this command wrote for a cluster not among them is
// removed with prune, reported stale without. Contexts and cluster entries
// that are already right are left as they are, so that running it again
// changes nothing.
func planMemberContexts(cfg *clientcmdapi.Config, fed string, members []string, existing sets.Set[string], prune bool) ([]contextChange, error) {
	fedContext, ok := cfg.Contexts[fed]
	if !ok {
		return nil, fmt.Errorf("kubeconfig has no context %q", fed)
	}
	fedCluster, ok := cfg.Clusters[fedContext.Cluster]
	if !ok {
		return nil, fmt.Errorf("kubeconfig context %q names cluster %q, which the kubeconfig does not have", fed, fedContext.Cluster)
	}
	if _, ok := cfg.AuthInfos[fedContext.AuthInfo]; fedContext.AuthInfo != "" && !ok {
		return nil, fmt.Errorf("kubeconfig context %q names user %q, which the kubeconfig does not have", fed, fedContext.AuthInfo)
	}
	var changes []contextChange
	for _, member := range members {
		changes = append(changes, setMemberContext(cfg, fed, fedContext, fedCluster, member))
	}
	if existing != nil {
		changes = append(changes, staleContexts(cfg, fed, existing, prune)...)
	}
	return changes, nil
}

// setMemberContext writes member's context and cluster entry unless they are
// already right.
func setMemberContext(cfg *clientcmdapi.Config, fed string, fedContext *clientcmdapi.Context, fedCluster *clientcmdapi.Cluster, member string) contextChange {
	name := memberContextName(fed, member)
	change := contextChange{name: name, cluster: member, server: proxyURL(fedCluster.Server, member), action: contextUnchanged}

	wantCluster := fedCluster.DeepCopy()
	wantCluster.Server = change.server
	// A new entry goes to the file of the federation's cluster entry; an
	// existing one stays in its file.
	if old, ok := cfg.Clusters[name]; ok {
		wantCluster.LocationOfOrigin = old.LocationOfOrigin
		wantCluster.Extensions = old.Extensions
		if sameCluster(old, wantCluster) {
			wantCluster = old
		} else {
			change.action = contextUpdated
		}
	} else {
		change.action = contextCreated
	}
	cfg.Clusters[name] = wantCluster

	wantContext := &clientcmdapi.Context{
		LocationOfOrigin: fedContext.LocationOfOrigin,
		Cluster:          name,
		AuthInfo:         fedContext.AuthInfo,
		Namespace:        fedContext.Namespace,
	}
	if old, ok := cfg.Contexts[name]; ok {
		wantContext.LocationOfOrigin = old.LocationOfOrigin
		wantContext.Namespace = old.Namespace
		wantContext.Extensions = old.Extensions
		if old.Cluster == wantContext.Cluster && old.AuthInfo == wantContext.AuthInfo {
			wantContext = old
		} else if change.action == contextUnchanged {
			change.action = contextUpdated
		}
	} else {
		change.action = contextCreated
	}
	cfg.Contexts[name] = wantContext
	return change
}

// sameCluster compares what reaching a server depends on.
func sameCluster(a, b *clientcmdapi.Cluster) bool {
	return a.Server == b.Server && a.TLSServerName == b.TLSServerName &&
		a.InsecureSkipTLSVerify == b.InsecureSkipTLSVerify &&
		a.CertificateAuthority == b.CertificateAuthority &&
		bytes.Equal(a.CertificateAuthorityData, b.CertificateAuthorityData) &&
		a.ProxyURL == b.ProxyURL && a.DisableCompression == b.DisableCompression
}

// staleContexts finds the contexts FED/NAME this command wrote (their
// cluster entry FED/NAME reaches NAME's proxy path) for a NAME that is not
// among existing, and removes them and their cluster entries with prune.
func staleContexts(cfg *clientcmdapi.Config, fed string, existing sets.Set[string], prune bool) []contextChange {
	var changes []contextChange
	for _, name := range slices.Sorted(maps.Keys(cfg.Contexts)) {
		member, ok := strings.CutPrefix(name, fed+"/")
		if !ok || existing.Has(member) || cfg.Contexts[name].Cluster != name {
			continue
		}
		cluster, ok := cfg.Clusters[name]
		if !ok || !strings.HasSuffix(cluster.Server, proxyURL("", member)) {
			continue
		}
		change := contextChange{name: name, cluster: member, server: cluster.Server, action: contextStale}
		if prune {
			change.action = contextRemoved
			delete(cfg.Contexts, name)
			delete(cfg.Clusters, name)
			if cfg.CurrentContext == name {
				cfg.CurrentContext = ""
			}
		}
		changes = append(changes, change)
	}
	return changes
}

// changed says whether any of changes writes the kubeconfig.
func changed(changes []contextChange) bool {
	return slices.ContainsFunc(changes, func(c contextChange) bool {
		return c.action != contextUnchanged && c.action != contextStale
	})
}
