package conformance_test

import (
	"fmt"
	"regexp"
	"strings"
)

// chosen are the conformance tests that need only what the federation
// serves (namespaces, ConfigMaps, Secrets, Services, events, Ingresses,
// Deployments, Jobs, CronJobs, PDBs, Leases, CRDs and custom resources,
// ResourceQuotas, LimitRanges, ServiceAccounts, CSRs, discovery,
// authorization reviews): no Pods, Nodes or other types it does not serve.
// Every one must pass.
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
	// CustomResourceDefinitions and custom resources are served
	// (apiextensions-apiserver at the federation), their OpenAPI published.
	"[sig-api-machinery] CustomResourceDefinition resources [Privileged:ClusterAdmin] Simple CustomResourceDefinition creating/deleting custom resource definition objects works [Conformance]",
	"[sig-api-machinery] CustomResourceDefinition resources [Privileged:ClusterAdmin] Simple CustomResourceDefinition getting/updating/patching custom resource definition status sub-resource works [Conformance]",
	"[sig-api-machinery] CustomResourceDefinition resources [Privileged:ClusterAdmin] Simple CustomResourceDefinition listing custom resource definition objects works [Conformance]",
	"[sig-api-machinery] CustomResourceDefinition resources [Privileged:ClusterAdmin] should include custom resource definition resources in discovery documents [Conformance]",
	"[sig-api-machinery] CustomResourcePublishOpenAPI [Privileged:ClusterAdmin] removes definition from spec when one version gets changed to not be served [Conformance]",
	"[sig-api-machinery] CustomResourcePublishOpenAPI [Privileged:ClusterAdmin] updates the published spec when one version gets renamed [Conformance]",
	"[sig-api-machinery] CustomResourcePublishOpenAPI [Privileged:ClusterAdmin] works for multiple CRDs of different groups [Conformance]",
	"[sig-api-machinery] CustomResourcePublishOpenAPI [Privileged:ClusterAdmin] works for multiple CRDs of same group and version but different kinds [Conformance]",
	"[sig-api-machinery] CustomResourcePublishOpenAPI [Privileged:ClusterAdmin] works for multiple CRDs of same group but different versions [Conformance]",
	"[sig-api-machinery] FieldValidation should detect unknown metadata fields in both the root and embedded object of a CR [Conformance]",
	// Custom resources delete as on a cluster (a tombstone, no finalizer):
	// a watch sees ADDED then DELETED, and kubectl delete returns at once.
	"[sig-api-machinery] AggregatedDiscovery should support aggregated discovery interface for CRDs [Conformance]",
	"[sig-api-machinery] AggregatedDiscovery should support raw aggregated discovery request for CRDs [Conformance]",
	"[sig-api-machinery] CustomResourceDefinition Watch [Privileged:ClusterAdmin] CustomResourceDefinition Watch watch on custom resource definition objects [Conformance]",
	"[sig-api-machinery] CustomResourceDefinition resources [Privileged:ClusterAdmin] custom resource defaulting for requests and from storage works [Conformance]",
	"[sig-api-machinery] CustomResourcePublishOpenAPI [Privileged:ClusterAdmin] works for CRD preserving unknown fields at the schema root [Conformance]",
	"[sig-api-machinery] CustomResourcePublishOpenAPI [Privileged:ClusterAdmin] works for CRD preserving unknown fields in an embedded object [Conformance]",
	"[sig-api-machinery] CustomResourcePublishOpenAPI [Privileged:ClusterAdmin] works for CRD with validation schema [Conformance]",
	"[sig-api-machinery] CustomResourcePublishOpenAPI [Privileged:ClusterAdmin] works for CRD without validation schema [Conformance]",
	"[sig-api-machinery] FieldValidation should create/apply a valid CR for CRD with validation schema [Conformance]",
	"[sig-api-machinery] FieldValidation should create/apply an invalid CR with extra properties for CRD with validation schema [Conformance]",
	"[sig-api-machinery] FieldValidation should detect duplicates in a CR when preserving unknown fields [Conformance]",
	// ServiceAccount tokens of the federation's own key (TokenRequest),
	// reviewed by its TokenReview.
	"[sig-auth] ServiceAccounts should create a serviceAccountToken and ensure a successful TokenReview [Conformance]",
	// ResourceQuotas: the federation's quota controller counts its own
	// objects of the federated types, and its admission refuses a create
	// beyond the quota.
	"[sig-api-machinery] ResourceQuota should apply changes to a resourcequota status [Conformance]",
	"[sig-api-machinery] ResourceQuota should be able to update and delete ResourceQuota. [Conformance]",
	"[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the life of a configMap. [Conformance]",
	"[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the life of a replica set. [Conformance]",
	"[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the life of a secret. [Conformance]",
	"[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the life of a service. [Conformance]",
	"[sig-api-machinery] ResourceQuota should create a ResourceQuota and ensure its status is promptly calculated. [Conformance]",
	"[sig-api-machinery] ResourceQuota should manage the lifecycle of a ResourceQuota [Conformance]",
	"[sig-scheduling] LimitRange should list, patch and delete a LimitRange by collection [Conformance]",
	// CronJobs and PodDisruptionBudgets are served.
	"[sig-apps] CronJob should support CronJob API operations [Conformance]",
	"[sig-apps] DisruptionController Listing PodDisruptionBudgets for all namespaces should list and delete a collection of PodDisruptionBudgets [Conformance]",
	"[sig-apps] DisruptionController should create a PodDisruptionBudget [Conformance]",
	// ServiceAccounts, CertificateSigningRequests (the agents' own API) and
	// SubjectAccessReviews are served.
	"[sig-auth] Certificates API [Privileged:ClusterAdmin] should support CSR API operations [Conformance]",
	"[sig-auth] ServiceAccounts should run through the lifecycle of a ServiceAccount [Conformance]",
	"[sig-auth] ServiceAccounts should update a ServiceAccount [Conformance]",
	"[sig-auth] SubjectReview should support SubjectReview API operations [Conformance]",
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
// not serve or run, or a fix under way; docs/conformance.md says the same.
const (
	needsPods     = "runs pods: the federation runs no kubelet and holds no Pods (it serves them read-only and empty; members run them)"
	needsNodes    = "needs Nodes: the federation has none"
	needsAllAPIs  = "expects every built-in API group; admissionregistration, apiregistration, flowcontrol, node, scheduling and storage are not served"
	needsWebhooks = "needs admission webhooks (admissionregistration.k8s.io, not served) and pods serving them"
	needsPVs      = "creates PersistentVolumes, which the federation serves read-only and empty"
)

var excluded = []exclusion{
	{file: "test/e2e/common/node/podtemplates.go", why: "needs PodTemplates, not served"},
	{file: "test/e2e/common/node/runtimeclass.go", why: "needs RuntimeClasses (node.k8s.io), not served; most also run pods"},
	{file: "test/e2e/common/node/", why: needsPods},
	{file: "test/e2e/common/storage/", why: "mounts volumes into pods: " + needsPods},
	{file: "test/e2e/common/network/", why: needsPods},
	{file: "test/e2e/node/", why: needsPods + "; some also need Nodes"},
	{file: "test/e2e/storage/persistent_volumes.go", why: needsPVs},
	{file: "test/e2e/storage/", why: "needs storage.k8s.io (StorageClasses, CSI objects, VolumeAttachments, VolumeAttributesClasses), not served, or mounts volumes into pods"},
	{file: "test/e2e/scheduling/limit_range.go", name: "ensure pod has those defaults", why: needsPods},
	{file: "test/e2e/scheduling/preemption.go", why: "needs PriorityClasses (scheduling.k8s.io), not served, Nodes and pods"},
	{file: "test/e2e/scheduling/", why: "needs Nodes and a scheduler, and pods"},
	{file: "test/e2e/architecture/", why: needsNodes},
	{file: "test/e2e/dra/", why: "needs resource.k8s.io, not served, and a DRA driver on nodes"},
	{file: "test/e2e/apps/deployment.go", why: "lists the Deployment's pods at the API: " + needsPods},
	{file: "test/e2e/apps/replica_set.go", why: "creates pods for the ReplicaSet to adopt, or lists its pods at the API: " + needsPods},
	{file: "test/e2e/apps/job.go", why: "waits on the Job's pods or Nodes at the API, or on pods that fail (the members' simulated pods always succeed); " +
		"an Indexed Job with a successPolicy is divided into member copies the members refuse"},
	{file: "test/e2e/apps/daemon_set.go", why: "waits for a daemon pod on every Node: the federation has no Nodes and holds no Pods"},
	{file: "test/e2e/apps/statefulset.go", why: "most wait for the StatefulSet's pods at the API or list Nodes; each test's cleanup waited 10 minutes " +
		"for PersistentVolumes, served read-only and empty since (the tests were not run again)"},
	{file: "test/e2e/apps/cronjob.go", name: `when suspended \[Slow\]`, why: "passes (a suspended CronJob stays suspended in every member), but watches 5 minutes for no Job: " +
		"too long for make test's budget; make conformance FOCUS='when suspended' runs it"},
	{file: "test/e2e/apps/cronjob.go", why: "each member's cronjob controller runs its own Jobs: the federation's status.active lists every member's " +
		"(3 where the test expects 1) and the federation lists none of those Jobs"},
	{file: "test/e2e/apps/disruption.go", name: "block an eviction|observe PodDisruptionBudget status|update/patch PodDisruptionBudget status",
		why: "creates pods for the budget to count, or evicts them: " + needsPods},
	{file: "test/e2e/apps/rc.go", why: "creates ReplicationControllers (served read-only and empty), and runs pods"},
	{file: "test/e2e/apps/controller_revision.go", why: "needs ControllerRevisions, not served, and a DaemonSet's pods on Nodes"},
	{file: "test/e2e/apimachinery/aggregated_discovery.go", why: needsAllAPIs},
	{file: "test/e2e/apimachinery/discovery.go", name: "should locate the groupVersion", why: needsAllAPIs},
	{file: "test/e2e/apimachinery/crd_conversion_webhook.go", why: "needs a pod serving the conversion webhook: " + needsPods},
	{file: "test/e2e/apimachinery/field_validation.go", name: "unknown fields for CRD with no validation schema",
		why: "the federation writes its members' status into an annotation of a custom resource without a status subresource: " +
			"the CRD fixture's watch sees MODIFIED between the ADDED and DELETED of its probe object"},
	{file: "test/e2e/apimachinery/crd_selectable_fields.go", why: "deploys a conversion webhook served by a pod: " + needsPods},
	{file: "test/e2e/apimachinery/resource_quota.go", name: "replication controller", why: "creates a ReplicationController (served read-only and empty)"},
	{file: "test/e2e/apimachinery/resource_quota.go", why: "creates pods: " + needsPods},
	{file: "test/e2e/apimachinery/aggregator.go", why: "needs APIServices (apiregistration.k8s.io), not served, and a pod serving the aggregated API"},
	{file: "test/e2e/apimachinery/webhook.go", why: needsWebhooks},
	{file: "test/e2e/apimachinery/validatingadmissionpolicy.go", why: "needs ValidatingAdmissionPolicies (admissionregistration.k8s.io), not served"},
	{file: "test/e2e/apimachinery/mutatingadmissionpolicy.go", why: "needs MutatingAdmissionPolicies (admissionregistration.k8s.io), not served"},
	{file: "test/e2e/apimachinery/flowcontrol.go", why: "needs API priority and fairness (flowcontrol.apiserver.k8s.io), not served"},
	{file: "test/e2e/apimachinery/garbage_collector.go", why: "counts the pods left at the API, or needs ReplicationControllers: " + needsPods + "; nor does it run a garbage collector"},
	{file: "test/e2e/apimachinery/chunking.go", why: "lists 400 PodTemplates, not served"},
	{file: "test/e2e/apimachinery/namespace.go", name: `pods are removed|delete pod first`, why: needsPods},
	{file: "test/e2e/apimachinery/namespace.go", name: "services are removed", why: "waits for the namespace's default ServiceAccount, " +
		"which the federation does not make (each member makes its own)"},
	{file: "test/e2e/auth/service_accounts.go", name: "kube-root-ca.crt", why: "needs the root CA publisher (a kube-root-ca.crt ConfigMap in every namespace), " +
		"which the federation does not run (each member publishes its own)"},
	{file: "test/e2e/auth/service_accounts.go", why: "mounts the account's token into pods: " + needsPods},
	{file: "test/e2e/kubectl/", why: "runs pods or ReplicationControllers with kubectl: " + needsPods},
	{file: "test/e2e/instrumentation/events.go", why: "needs events.k8s.io/v1, not served (core v1 events are)"},
	{file: "test/e2e/network/apiserver.go", name: "Endpoints and EndpointSlices", why: "creates Endpoints (served read-only and empty) and EndpointSlices (not served)"},
	{file: "test/e2e/network/endpoint", why: "needs Endpoints (served read-only and empty) or EndpointSlices (not served), and pods"},
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
