package security_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/poll"
)

func init() {
	attacks["workloads: a Deployment in kube-system never reaches the member"] = workloadsInKubeSystem
	attacks["preferences: weights above 2^31-1 are refused"] = preferencesHugeWeights
	attacks["ownership: an unknown conflict resolution is refused"] = ownershipBadAnnotations
	attacks["services: a cluster IP outside the federation's range, or taken, is refused"] = serviceClusterIPs
	attacks["dns: a tenant cannot write service-ingresses"] = dnsTenantIngresses
	attacks["dns: a Service in federation-system gets no records"] = dnsFederationSystemService
}

// recordsConverge bounds how long a Service takes to get its DNS names:
// propagation, the member's load balancer and endpoints, status, records.
const recordsConverge = 90 * time.Second

// attackerAddress is where an attacker would send a federated Service's
// name (TEST-NET-3).
const attackerAddress = "203.0.113.7"

// attackerIngresses is a service-ingresses annotation value sending
// cluster1's share of a Service to attackerAddress.
var attackerIngresses = `{"items":[{"cluster":"` + member + `","items":[{"ip":"` + attackerAddress + `"}]}]}`

// workloadManifest is a Deployment of one pause container with extra
// metadata and pod spec lines (indented for their place).
func workloadManifest(ns, name, metadata, podSpec string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[2]s
  namespace: %[1]s
%[3]sspec:
  replicas: 1
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec:
      containers: [{name: c, image: registry.k8s.io/pause:3.10}]
%[4]s`, ns, name, metadata, podSpec)
}

// loadBalancer is a LoadBalancer Service selecting the pods of app name,
// with the annotations given as YAML flow mapping entries.
func loadBalancer(ns, name, annotations string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: %s
  namespace: %s
  annotations: {%s}
spec:
  type: LoadBalancer
  selector: {app: %s}
  ports: [{port: 80}]
`, name, ns, annotations, name)
}

// deleteWhenDone deletes an object at the federation as the admin when
// the test ends.
func (f *fixture) deleteWhenDone(resource, ns, name string) {
	f.t.Cleanup(func() {
		out, err := f.as("fed", "delete", resource, name, "-n", ns, "--ignore-not-found", "--wait=false")
		assert.NoError(f.t, err, out)
	})
}

// waitMemberDeployment waits until the member holds Deployment ns/name
// with replicas.
func (f *fixture) waitMemberDeployment(ns, name string, replicas int32) {
	f.t.Helper()
	client := f.memberClient()
	require.NoError(f.t, poll.Until(context.Background(), converge, fmt.Sprintf("Deployment %s/%s in %s", ns, name, member), func(ctx context.Context) error {
		d, err := client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != replicas {
			return fmt.Errorf("replicas %v, want %d", d.Spec.Replicas, replicas)
		}
		return nil
	}))
}

// workloadsInKubeSystem: a Deployment in the federated kube-system would run
// in every member's kube-system with the host's PID namespace and its
// root filesystem. It is refused with an event and a condition, and never
// written to the member.
func workloadsInKubeSystem(f *fixture) {
	ctx := context.Background()
	const name = "sec-hostpid"
	// The namespace must exist at the federation for anything to be created
	// in it; like at a cluster, kube-system can never be deleted again.
	out, err := f.applyAs("fed", "apiVersion: v1\nkind: Namespace\nmetadata: {name: kube-system}\n")
	require.NoError(f.t, err, out)
	hostly := `      hostPID: true
      volumes: [{name: root, hostPath: {path: /}}]
`
	f.deleteWhenDone("deployment", "kube-system", name)
	out, err = f.applyAs("fed", workloadManifest("kube-system", name, "", hostly))
	require.NoError(f.t, err, out)

	require.NoError(f.t, poll.Until(ctx, converge, "the NotPropagated condition and event of kube-system/"+name, func(context.Context) error {
		reason, err := f.as("fed", "get", "deployment", name, "-n", "kube-system", "-o",
			`jsonpath={.status.conditions[?(@.type=="Propagated")].status}/{.status.conditions[?(@.type=="Propagated")].reason}`)
		if err != nil {
			return fmt.Errorf("%v: %s", err, reason)
		}
		if reason != "False/NotPropagated" {
			return fmt.Errorf("Propagated condition %q", reason)
		}
		events, err := f.as("fed", "get", "events", "-n", "kube-system", "--field-selector",
			"involvedObject.kind=Deployment,involvedObject.name="+name+",reason=NotPropagated", "-o", "jsonpath={.items[*].message}")
		if err != nil {
			return fmt.Errorf("%v: %s", err, events)
		}
		if !strings.Contains(events, "namespace kube-system is never propagated") {
			return fmt.Errorf("no NotPropagated event: %q", events)
		}
		return nil
	}))

	// Positive control: the tenant's own Deployment travels meanwhile.
	const ordinary = "sec-ordinary"
	f.deleteWhenDone("deployment", tenantNamespace, ordinary)
	out, err = f.applyAs(tenant, workloadManifest(tenantNamespace, ordinary, "", ""))
	require.NoError(f.t, err, out)
	f.waitMemberDeployment(tenantNamespace, ordinary, 1)

	client := f.memberClient()
	_, err = client.AppsV1().Deployments("kube-system").Get(ctx, name, metav1.GetOptions{})
	assert.True(f.t, apierrors.IsNotFound(err), "the member's kube-system holds no %s: %v", name, err)
	ns, err := client.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
	require.NoError(f.t, err)
	assert.NotContains(f.t, ns.Labels, federationv1beta1.FederationLabel, "the member's own kube-system is not the federation's")
	assert.Empty(f.t, f.admin("get", "deployment", name, "-n", "kube-system", "-o", "jsonpath={.metadata.finalizers}"),
		"nothing to delete in members, so nothing holds its deletion")
}

// preferencesHugeWeights: a weight of 2^62 was accepted and the planner
// then placed nothing (the product with the replicas overflowed).
func preferencesHugeWeights(f *fixture) {
	const name = "sec-heavy"
	key := federationv1beta1.DeploymentPreferencesAnnotation
	prefs := func(weight string) string {
		return fmt.Sprintf("  annotations:\n    %s: '{\"clusters\":{\"%s\":{\"weight\":%s}}}'\n", key, member, weight)
	}
	f.deleteWhenDone("deployment", tenantNamespace, name)
	out, err := f.applyAs(tenant, workloadManifest(tenantNamespace, name, prefs("4611686018427387904"), ""))
	require.Error(f.t, err, out)
	assert.ErrorContains(f.t, err, "is invalid")
	assert.ErrorContains(f.t, err, "metadata.annotations["+key+"].clusters["+member+"].weight")
	assert.ErrorContains(f.t, err, "must be at most 2147483647")
	out, err = f.as(tenant, "get", "deployment", name, "-n", tenantNamespace)
	require.Error(f.t, err, out)
	assert.ErrorContains(f.t, err, "NotFound")

	// Positive control: the largest weight allowed places the replica.
	out, err = f.applyAs(tenant, workloadManifest(tenantNamespace, name, prefs("2147483647"), ""))
	require.NoError(f.t, err, out)
	f.waitMemberDeployment(tenantNamespace, name, 1)
}

// ownershipBadAnnotations: a misspelt conflict-resolution or
// delete-adopted-copies would silently mean the default; it is refused
// with a 422 naming the annotation, and nothing is stored.
func ownershipBadAnnotations(f *fixture) {
	for key, value := range map[string]string{
		federationv1beta1.ConflictResolutionAnnotation: "adpot",
		federationv1beta1.DeleteAdoptedAnnotation:      "yes",
	} {
		manifest := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sec-owned\n  namespace: %s\n  annotations: {%s: %q}\ndata: {k: v}\n",
			tenantNamespace, key, value)
		out, err := f.applyAs(tenant, manifest)
		require.Error(f.t, err, out)
		assert.ErrorContains(f.t, err, "is invalid")
		assert.ErrorContains(f.t, err, fmt.Sprintf("metadata.annotations[%s]: Unsupported value: %q", key, value))
		out, err = f.as(tenant, "get", "configmap", "sec-owned", "-n", tenantNamespace)
		require.Error(f.t, err, out)
		assert.ErrorContains(f.t, err, "NotFound")
	}
}

// serviceClusterIPs: a tenant asks for a member-range address (a member's
// DNS Service's, say) or the federation's own kubernetes Service's; both
// are refused with a 422 naming the field, and nothing is stored.
func serviceClusterIPs(f *fixture) {
	for ip, why := range map[string]string{
		"10.96.0.10": "is not in the valid range. The range of valid IPs is 198.18.0.0/16",
		"198.18.0.1": "provided IP is already allocated",
	} {
		manifest := fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: sec-ip, namespace: %s}\n"+
			"spec: {clusterIP: %q, ports: [{port: 53}]}\n", tenantNamespace, ip)
		out, err := f.applyAs(tenant, manifest)
		require.Error(f.t, err, out)
		assert.ErrorContains(f.t, err, "is invalid")
		assert.ErrorContains(f.t, err, "spec.clusterIPs[0]")
		assert.ErrorContains(f.t, err, why)
		out, err = f.as(tenant, "get", "service", "sec-ip", "-n", tenantNamespace)
		require.Error(f.t, err, out)
		assert.ErrorContains(f.t, err, "NotFound")
	}
}

// lookup asks server for the A records of name; it returns the response
// code and the addresses, sorted.
func lookup(ctx context.Context, server, name string) (int, []string, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	c := &dns.Client{Timeout: 2 * time.Second}
	r, _, err := c.ExchangeContext(ctx, m, server)
	if err != nil {
		return 0, nil, err
	}
	var ips []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			ips = append(ips, a.A.String())
		}
	}
	slices.Sort(ips)
	return r.Rcode, ips, nil
}

// serviceName is the global DNS name of a federated Service.
func serviceName(ns, name string) string {
	return fmt.Sprintf("%s.%s.fed.svc.%s", name, ns, dnsZone)
}

// waitResolves waits until the global name of Service ns/name answers an
// address (its member's load balancer), and fails at once if it ever
// answers attackerAddress.
func (f *fixture) waitResolves(ns, name string) {
	f.t.Helper()
	fqdn := serviceName(ns, name)
	require.NoError(f.t, poll.Until(context.Background(), recordsConverge, fqdn+" to answer", func(ctx context.Context) error {
		rcode, ips, err := lookup(ctx, f.dnsServer, fqdn)
		switch {
		case err != nil:
			return err
		case slices.Contains(ips, attackerAddress):
			return poll.Abort(fmt.Errorf("%s answered the attacker's %s: %v", fqdn, attackerAddress, ips))
		case len(ips) == 0:
			return fmt.Errorf("%s answered %s, no address", fqdn, dns.RcodeToString[rcode])
		}
		return nil
	}))
}

// servedWorkload creates, as user, a Deployment and a LoadBalancer Service
// of name in ns, so that the Service has ready endpoints in the member.
func (f *fixture) servedWorkload(user, ns, name, annotations string) {
	f.t.Helper()
	f.deleteWhenDone("deployment", ns, name)
	f.deleteWhenDone("service", ns, name)
	out, err := f.applyAs(user, workloadManifest(ns, name, "", "")+"---\n"+loadBalancer(ns, name, annotations))
	require.NoError(f.t, err, out)
}

// dnsTenantIngresses: the service-ingresses annotation says which addresses
// a Service's DNS names answer; a tenant who wrote it would send the
// federation's name of its Service (and, with a region of its choice,
// others') to an address of its choice.
func dnsTenantIngresses(f *fixture) {
	const name = "sec-web"
	f.servedWorkload(tenant, tenantNamespace, name, "")

	annotation := federationv1beta1.ServiceIngressesAnnotation + "=" + attackerIngresses
	out, err := f.as(tenant, "annotate", "service", name, "-n", tenantNamespace, "--overwrite", annotation)
	require.Error(f.t, err, out)
	assert.ErrorContains(f.t, err, "Forbidden")
	assert.ErrorContains(f.t, err, federationv1beta1.ServiceIngressesAnnotation)
	// Nor at creation.
	out, err = f.applyAs(tenant, loadBalancer(tenantNamespace, name+"-2", fmt.Sprintf("%s: '%s'", federationv1beta1.ServiceIngressesAnnotation, attackerIngresses)))
	f.deleteWhenDone("service", tenantNamespace, name+"-2")
	require.Error(f.t, err, out)
	assert.ErrorContains(f.t, err, "Forbidden")

	f.waitResolves(tenantNamespace, name)
	assert.NotContains(f.t, f.admin("get", "service", name, "-n", tenantNamespace, "-o", "yaml"), attackerAddress)
}

// dnsFederationSystemService: a Service in federation-system is never
// propagated, so its service-ingresses annotation can only be written by
// hand; it once made DNS names answer an address of the writer's choice.
func dnsFederationSystemService(f *fixture) {
	ctx := context.Background()
	const name = "sec-system-web"
	// The admin may write the annotation; it still makes no name.
	f.deleteWhenDone("service", federationv1beta1.SystemNamespace, name)
	out, err := f.applyAs("fed", loadBalancer(federationv1beta1.SystemNamespace, name,
		fmt.Sprintf("%s: '%s'", federationv1beta1.ServiceIngressesAnnotation, attackerIngresses)))
	require.NoError(f.t, err, out)
	out, err = f.as("fed", "annotate", "service", name, "-n", federationv1beta1.SystemNamespace, "--overwrite",
		federationv1beta1.ServiceIngressesAnnotation+"="+strings.Replace(attackerIngresses, attackerAddress, "203.0.113.8", 1))
	require.NoError(f.t, err, out)

	// Positive control, created after: once its name answers, the DNS
	// controller has long seen the federation-system Service.
	const control = "sec-control"
	f.servedWorkload(tenant, tenantNamespace, control, "")
	f.waitResolves(tenantNamespace, control)

	fqdn := serviceName(federationv1beta1.SystemNamespace, name)
	rcode, ips, err := lookup(ctx, f.dnsServer, fqdn)
	require.NoError(f.t, err)
	assert.Equal(f.t, "NXDOMAIN", dns.RcodeToString[rcode], "%s answered %v", fqdn, ips)
	_, err = f.memberClient().CoreV1().Services(federationv1beta1.SystemNamespace).Get(ctx, name, metav1.GetOptions{})
	assert.True(f.t, apierrors.IsNotFound(err), "never propagated: %v", err)
}
