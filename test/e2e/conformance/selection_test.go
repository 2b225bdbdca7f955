package conformance_test

import (
	"fmt"
	"regexp"
	"strings"
)

// chosen are the conformance tests that need only what the federation
// serves (namespaces, ConfigMaps, Secrets, Services, events, Ingresses,
// Deployments, Jobs, Leases, discovery, authorization reviews): no Pods, Nodes,
// ServiceAccounts or other types it does not serve. Every one must pass.
// The names are the tests' codenames in e2e.test's --list-conformance-tests.
var chosen = []string{
	"[sig-api-machinery] Discovery should validate PreferredVersion for each APIGroup [Conformance]",
	"[sig-api-machinery] FieldValidation should detect unknown and duplicate fields of a typed object [Conformance]",
	"[sig-api-machinery] FieldValidation should detect unknown metadata fields of a typed object [Conformance]",
	"[sig-api-machinery] Namespaces [Serial] should apply a finalizer to a Namespace [Conformance]",
	"[sig-api-machinery] Namespaces [Serial] should apply an update to a Namespace [Conformance]",
	"[sig-api-machinery] Namespaces [Serial] should apply changes to a namespace status [Conformance]",
	"[sig-api-machinery] Namespaces [Serial] should patch a Namespace [Conformance]",
	"[sig-api-machinery] Servers with support for Table transformation should return a 406 for a backend which does not implement metadata [Conformance]",
	"[sig-api-machinery] Watchers should be able to restart watching from the last resource version observed by the previous watch [Conformance]",
	"[sig-api-machinery] Watchers should be able to start watching from a specific resource version [Conformance]",
	"[sig-api-machinery] Watchers should observe add, update, and delete watch notifications on configmaps [Conformance]",
	"[sig-api-machinery] Watchers should observe an object deletion if it stops meeting the requirements of the selector [Conformance]",
	"[sig-api-machinery] Watchers should receive events on concurrent watches in same order [Conformance]",
	"[sig-api-machinery] server version should find the server version [Conformance]",
	// Deployments, ReplicaSets and Jobs whose status the federation brings
	// back from the members, where the pods run; the Deployment tests also
	// find the revision's ReplicaSet at the federation (deploymenthistory).
	"[sig-apps] Deployment Deployment should have a working scale subresource [Conformance]",
	"[sig-apps] Deployment RecreateDeployment should delete old pods and create new ones [Conformance]",
	"[sig-apps] Deployment should run the lifecycle of a Deployment [Conformance]",
	"[sig-apps] Deployment should validate Deployment Status endpoints [Conformance]",
	"[sig-apps] Job should manage the lifecycle of a job [Conformance]",
	// Passes because the members' simulated pods never fail.
	"[sig-apps] Job should run a job to completion when tasks sometimes fail and are locally restarted [Conformance]",
	"[sig-apps] ReplicaSet Replicaset should have a working scale subresource [Conformance]",
	"[sig-cli] Kubectl client Kubectl api-versions should check if v1 is in available api versions [Conformance]",
	"[sig-cli] Kubectl client Kubectl cluster-info should check if Kubernetes control plane services is included in cluster-info [Conformance]",
	"[sig-cli] Kubectl client Kubectl diff should check if kubectl diff finds a difference for Deployments [Conformance]",
	"[sig-cli] Kubectl client Kubectl version should check is all data is printed [Conformance]",
	"[sig-cli] Kubectl client Proxy server should support --unix-socket=/path [Conformance]",
	"[sig-cli] Kubectl client Proxy server should support proxy with --port 0 [Conformance]",
	"[sig-instrumentation] Events should delete a collection of events [Conformance]",
	"[sig-instrumentation] Events should manage the lifecycle of an event [Conformance]",
	"[sig-network] API Server should provide secure master service [Conformance]",
	"[sig-network] Ingress API should support creating Ingress API operations [Conformance]",
	"[sig-network] Services should complete a service status lifecycle [Conformance]",
	"[sig-network] Services should delete a collection of services [Conformance]",
	"[sig-network] Services should find a service from listing all namespaces [Conformance]",
	"[sig-node] ConfigMap should fail to create ConfigMap with empty key [Conformance]",
	"[sig-node] ConfigMap should run through a ConfigMap lifecycle [Conformance]",
	"[sig-node] ConfigMap should update ConfigMap successfully [NodeConformance] [Conformance]",
	// Leases are served for the controller managers' leader election.
	"[sig-node] Lease lease API should be available [Conformance]",
	"[sig-node] Secrets should fail to create secret due to empty secret key [Conformance]",
	"[sig-node] Secrets should patch a secret [Conformance]",
}

// exclusion is a group of conformance tests the federation cannot pass
// by design: the tests in file (a prefix of e2e.test's source path) whose
// name matches name (all when empty), and why.
type exclusion struct {
	file string
	name string
	why  string
}

// Why each group is left out. The reasons are what the federation does
// not serve or run; docs/conformance.md says the same.
const (
	needsPods     = "runs pods: the federation serves no Pods and runs no kubelet (members do)"
	needsNodes    = "needs Nodes: the federation has none"
	needsSA       = "needs ServiceAccounts and their token controller, which the federation does not serve"
	needsAllAPIs  = "expects every built-in API group (admissionregistration, apiextensions, certificates, coordination, ...)"
	needsCRDs     = "needs CustomResourceDefinitions (apiextensions.k8s.io), not served"
	needsWebhooks = "needs admission webhooks or policies (admissionregistration.k8s.io) and pods serving them"
)

var excluded = []exclusion{
	{file: "test/e2e/common/node/", why: needsPods},
	{file: "test/e2e/common/node/podtemplates.go", why: "needs PodTemplates, not served"},
	{file: "test/e2e/common/node/runtimeclass.go", why: "needs RuntimeClasses (node.k8s.io) and pods"},
	{file: "test/e2e/common/storage/", why: "mounts volumes into pods: " + needsPods},
	{file: "test/e2e/common/network/", why: needsPods},
	{file: "test/e2e/node/", why: needsPods + "; some also need Nodes"},
	{file: "test/e2e/storage/", why: "needs storage.k8s.io, PersistentVolumes or CSI, and pods"},
	{file: "test/e2e/scheduling/", why: "needs Nodes, a scheduler, LimitRanges or PriorityClasses"},
	{file: "test/e2e/architecture/", why: needsNodes},
	{file: "test/e2e/dra/", why: "needs resource.k8s.io and a DRA driver on nodes"},
	{file: "test/e2e/apps/deployment.go", why: "lists the Deployment's pods at the API: " + needsPods},
	{file: "test/e2e/apps/replica_set.go", why: "lists the ReplicaSet's pods at the API (VerifyPodsRunning): " + needsPods},
	{file: "test/e2e/apps/job.go", why: "waits on the Job's pods or Nodes at the API, or on pods that fail (the members' simulated pods always succeed); " +
		"an Indexed Job with a successPolicy is divided into member copies the members refuse"},
	{file: "test/e2e/apps/daemon_set.go", why: "waits for a daemon pod on every Node: the federation has no Nodes and serves no Pods"},
	{file: "test/e2e/apps/", why: "needs StatefulSets, CronJobs, ReplicationControllers, ControllerRevisions or PodDisruptionBudgets, not served, and pods"},
	{file: "test/e2e/apimachinery/aggregated_discovery.go", why: needsAllAPIs + "; two also need CustomResourceDefinitions"},
	{file: "test/e2e/apimachinery/discovery.go", name: "should locate the groupVersion", why: needsAllAPIs},
	{file: "test/e2e/apimachinery/field_validation.go", why: "validates custom resources: " + needsCRDs},
	{file: "test/e2e/apimachinery/crd_", why: needsCRDs},
	{file: "test/e2e/apimachinery/custom_resource_definition.go", why: needsCRDs},
	{file: "test/e2e/apimachinery/aggregator.go", why: "needs APIServices (apiregistration.k8s.io) and a pod serving the aggregated API"},
	{file: "test/e2e/apimachinery/webhook.go", why: needsWebhooks},
	{file: "test/e2e/apimachinery/validatingadmissionpolicy.go", why: needsWebhooks},
	{file: "test/e2e/apimachinery/mutatingadmissionpolicy.go", why: needsWebhooks},
	{file: "test/e2e/apimachinery/flowcontrol.go", why: "needs API priority and fairness (flowcontrol.apiserver.k8s.io), not served"},
	{file: "test/e2e/apimachinery/resource_quota.go", why: "needs ResourceQuotas and their controller, not served"},
	{file: "test/e2e/apimachinery/garbage_collector.go", why: "needs the garbage collector and the deployment/RC controllers at the federation, and pods"},
	{file: "test/e2e/apimachinery/chunking.go", why: "lists 400 PodTemplates, not served"},
	{file: "test/e2e/apimachinery/namespace.go", name: `pods are removed|delete pod first`, why: needsPods},
	{file: "test/e2e/apimachinery/namespace.go", name: "services are removed", why: "waits for the namespace's default ServiceAccount: " + needsSA},
	{file: "test/e2e/auth/service_accounts.go", why: needsSA},
	{file: "test/e2e/auth/subjectreviews.go", why: "creates a ServiceAccount to review: " + needsSA},
	{file: "test/e2e/auth/certificates.go", why: "needs CertificateSigningRequests (certificates.k8s.io), not served"},
	{file: "test/e2e/kubectl/", why: "runs pods or ReplicationControllers with kubectl: " + needsPods},
	{file: "test/e2e/instrumentation/events.go", why: "needs events.k8s.io/v1, not served (core v1 events are)"},
	{file: "test/e2e/network/apiserver.go", name: "Endpoints and EndpointSlices", why: "needs Endpoints and EndpointSlices, not served"},
	{file: "test/e2e/network/endpoint", why: "needs Endpoints or EndpointSlices, not served, and pods"},
	{file: "test/e2e/network/ingressclass.go", why: "needs IngressClasses, not served"},
	{file: "test/e2e/network/service_cidrs.go", why: "needs ServiceCIDRs and IPAddresses (networking.k8s.io), not served"},
	{file: "test/e2e/network/", why: "reaches Services or DNS through pods and endpoints: " + needsPods},
}

// conformanceTest is one entry of e2e.test --list-conformance-tests.
type conformanceTest struct {
	Codename string `json:"codename"`
	File     string `json:"file"`
}

// name is the test's codename with its whitespace normalised.
func (c conformanceTest) name() string { return normalise(c.Codename) }

func normalise(s string) string { return strings.Join(strings.Fields(s), " ") }

// decide says whether a conformance test is chosen, or why not; ok is
// false when nothing decides it (a test new in this Kubernetes version).
func decide(c conformanceTest) (chosenTest bool, why string, ok bool) {
	for _, name := range chosen {
		if name == c.name() {
			return true, "", true
		}
	}
	for _, e := range excluded {
		if !strings.HasPrefix(c.File, e.file) {
			continue
		}
		if e.name == "" || regexp.MustCompile(e.name).MatchString(c.name()) {
			return false, e.why, true
		}
	}
	return false, "", false
}

// focus is the ginkgo focus that selects exactly the chosen tests.
func focus() string {
	quoted := make([]string, len(chosen))
	for i, name := range chosen {
		quoted[i] = regexp.QuoteMeta(name)
	}
	return strings.Join(quoted, "|")
}

// undecided lists the conformance tests nothing decides, and chosen
// names that are not conformance tests (any more).
func undecided(tests []conformanceTest) []string {
	var out []string
	names := map[string]bool{}
	for _, c := range tests {
		names[c.name()] = true
		if _, _, ok := decide(c); !ok {
			out = append(out, fmt.Sprintf("%s (%s) is neither chosen nor excluded", c.name(), c.File))
		}
	}
	for _, name := range chosen {
		if !names[name] {
			out = append(out, fmt.Sprintf("%s is chosen but not a conformance test of this e2e.test", name))
		}
	}
	return out
}
