package crds_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
)

// converge bounds how long propagation may take in these tests.
const converge = 60 * time.Second

var (
	crds         = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	certificates = schema.GroupVersionResource{Group: "certs.example.com", Version: "v1", Resource: "certificates"}
	widgets      = schema.GroupVersionResource{Group: "certs.example.com", Version: "v1", Resource: "widgets"}
	gadgets      = schema.GroupVersionResource{Group: "certs.example.com", Version: "v1", Resource: "gadgets"}
)

// certificateCRD is a cert-manager-like CRD: namespaced, with a status
// subresource whose conditions say Ready.
const certificateCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: certificates.certs.example.com
spec:
  group: certs.example.com
  scope: Namespaced
  names: {plural: certificates, singular: certificate, kind: Certificate, shortNames: [cert]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Ready, type: string, jsonPath: ".status.conditions[?(@.type==\"Ready\")].status"}
    schema:
      openAPIV3Schema:
        type: object
        description: A Certificate asks for a signed certificate.
        properties:
          spec:
            type: object
            description: What the certificate is for.
            properties:
              secretName: {type: string, description: The Secret the certificate is written to.}
              dnsNames: {type: array, items: {type: string}}
          status:
            type: object
            properties:
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
                    reason: {type: string}
                    message: {type: string}
                    lastTransitionTime: {type: string, format: date-time}
`

// widgetCRD is Deployment-like: its members' readyReplicas are summed.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.certs.example.com
  annotations:
    federation.kubernetes.io/status-aggregation: '{"readyReplicas":"sum"}'
spec:
  group: certs.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer}
          status:
            type: object
            properties:
              readyReplicas: {type: integer}
`

// gadgetCRD is the gadgets CRD with one version (the federation's: v1).
func gadgetCRD(version string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.certs.example.com
spec:
  group: certs.example.com
  scope: Cluster
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: %s
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, version)
}

// ownGadgetCRD is the CRD cluster3 already has of its own: stored as
// version "own", also served as v1, so that the federation's gadgets can
// be copied there.
var ownGadgetCRD = gadgetCRD("own") + `  - name: v1
    served: true
    storage: false
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// notOurs accepts a member object that carries no federation label.
func notOurs(o *unstructured.Unstructured) error {
	if name := o.GetLabels()["federation.kubernetes.io/federation-name"]; name != "" {
		return fmt.Errorf("still labelled as federation %s's", name)
	}
	return nil
}

// gadget is a Gadget named name, with nothing but its metadata.
func gadget(name string) string {
	return "apiVersion: certs.example.com/v1\nkind: Gadget\nmetadata: {name: " + name + "}\n"
}

func certificate(name, selector string) string {
	return fmt.Sprintf(`apiVersion: certs.example.com/v1
kind: Certificate
metadata:
  name: %s
  namespace: e2e
  annotations:
    federation.alpha.kubernetes.io/cluster-selector: '%s'
spec:
  secretName: %s-tls
  dnsNames: [%s.example.com]
`, name, selector, name, name)
}

func widget(name string) string {
	return fmt.Sprintf("apiVersion: certs.example.com/v1\nkind: Widget\nmetadata: {name: %s, namespace: e2e}\nspec: {replicas: 2}\n", name)
}

// fixture is the federation "fed" with its members.
type fixture struct {
	fedenv.Fixture
	// fed reaches the federation as the user.
	fed dynamic.Interface
}

// federationClient is the user's dynamic client of the federation context.
func federationClient(t *testing.T, u *fedenv.User, context string) dynamic.Interface {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: u.Kubeconfig}, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	require.NoError(t, err)
	client, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	return client
}

func (f *fixture) in(t *testing.T) *fixture {
	c := *f
	c.T = t
	return &c
}

// established checks that a member's CRD is Established.
func established(obj *unstructured.Unstructured) error {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
			return nil
		}
	}
	return fmt.Errorf("not Established")
}

// setStatus writes the status of a member's copy, as the resource's own
// controller in that member would.
func (f *fixture) setStatus(cluster string, gvr schema.GroupVersionResource, name string, status map[string]any) {
	f.T.Helper()
	require.NoError(f.T, poll.Until(context.Background(), converge, "the status of "+name+" in "+cluster, func(ctx context.Context) error {
		client := f.Member(cluster).Resource(gvr).Namespace("e2e")
		obj, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		obj.Object["status"] = status
		_, err = client.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		return err
	}))
}

// readyStatus is a status whose Ready condition is status.
func readyStatus(status string) map[string]any {
	return map[string]any{"conditions": []any{map[string]any{
		"type": "Ready", "status": status, "reason": "Issued", "message": "by the test", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}}}
}

// waitFederated waits until check accepts the federated object.
func (f *fixture) waitFederated(gvr schema.GroupVersionResource, name string, check func(*unstructured.Unstructured) error) {
	f.T.Helper()
	require.NoError(f.T, poll.Until(context.Background(), converge, "the federated "+gvr.Resource+" "+name, func(ctx context.Context) error {
		obj, err := f.fed.Resource(gvr).Namespace("e2e").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		return check(obj)
	}))
}

// labelled adds a label (key=value) to a manifest's metadata.
func labelled(manifest, label string) string {
	key, value, _ := strings.Cut(label, "=")
	return strings.Replace(manifest, "metadata:\n", fmt.Sprintf("metadata:\n  labels: {%s: %q}\n", key, value), 1)
}

// watchNamed watches the federated object name in e2e with a real client
// watch from now, and returns a function that waits (within converge) for
// its DELETED event and returns the types of the events seen until then,
// the first the ADDED of the object as it is. A MODIFIED is counted only
// when it marks the object as being deleted (a delete held by finalizers):
// the federation's own status writes may still come before the delete.
func (f *fixture) watchNamed(gvr schema.GroupVersionResource, name string) func() []watch.EventType {
	f.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), converge)
	w, err := f.fed.Resource(gvr).Namespace("e2e").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	require.NoError(f.T, err)
	return func() []watch.EventType {
		f.T.Helper()
		defer cancel()
		defer w.Stop()
		var seen []watch.EventType
		for ev := range w.ResultChan() {
			if obj, ok := ev.Object.(*unstructured.Unstructured); ev.Type == watch.Modified && ok && obj.GetDeletionTimestamp() == nil {
				continue
			}
			seen = append(seen, ev.Type)
			if ev.Type == watch.Deleted {
				return seen
			}
		}
		f.T.Fatalf("no DELETED event of %s %s within %s; saw %v", gvr.Resource, name, converge, seen)
		return nil
	}
}

// gizmoCRD is of a group no member was joined for
// (--custom-resource-groups names only certs.example.com); its status
// subresource gives its resources a Propagated condition.
const gizmoCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.other.example.com
spec:
  group: other.example.com
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

var gizmos = schema.GroupVersionResource{Group: "other.example.com", Version: "v1", Resource: "gizmos"}

func gizmo(name string) string {
	return fmt.Sprintf("apiVersion: other.example.com/v1\nkind: Gizmo\nmetadata: {name: %s, namespace: e2e}\nspec: {size: 1}\n", name)
}

// notGrantedEvent is the event told when a member refuses a copy for its
// group (guard.ReasonGroupNotGranted).
const notGrantedEvent = "GroupNotGrantedInCluster"

// notGranted returns, by cluster, the GroupNotGrantedInCluster events of
// the federated Gizmo name (of its current UID): the event objects and
// their counts.
func (f *fixture) notGranted(ctx context.Context, name string) (map[string][]int64, []string, error) {
	obj, err := f.fed.Resource(gizmos).Namespace("e2e").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	list, err := f.fed.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace("e2e").List(ctx,
		metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		return nil, nil, err
	}
	byCluster := map[string][]int64{}
	var messages []string
	for _, e := range list.Items {
		uid, _, _ := unstructured.NestedString(e.Object, "involvedObject", "uid")
		reason, _, _ := unstructured.NestedString(e.Object, "reason")
		if uid != string(obj.GetUID()) || reason != notGrantedEvent {
			continue
		}
		message, _, _ := unstructured.NestedString(e.Object, "message")
		count, _, _ := unstructured.NestedInt64(e.Object, "count")
		messages = append(messages, message)
		for _, c := range []string{"cluster1", "cluster2", "cluster3"} {
			if strings.Contains(message, "to cluster "+c+":") {
				byCluster[c] = append(byCluster[c], count)
			}
		}
	}
	return byCluster, messages, nil
}

// waitNotGranted waits until the Gizmo name's copy was told refused for its
// group in each of clusters, with the cluster, the group and the fix.
func (f *fixture) waitNotGranted(name string, clusters []string) {
	f.T.Helper()
	require.NoError(f.T, poll.Until(context.Background(), f.Converge, fmt.Sprintf("%s events of gizmo %s for %v", notGrantedEvent, name, clusters), func(ctx context.Context) error {
		byCluster, messages, err := f.notGranted(ctx, name)
		if err != nil {
			return err
		}
		for _, c := range clusters {
			if len(byCluster[c]) == 0 {
				return fmt.Errorf("none for %s in %q", c, messages)
			}
		}
		for _, m := range messages {
			for _, want := range []string{"API group other.example.com", "--refresh --add-custom-resource-groups=other.example.com"} {
				if !strings.Contains(m, want) {
					return fmt.Errorf("no %q in %q", want, m)
				}
			}
		}
		return nil
	}))
}

// forbiddenLines counts the lines of the controller manager's log that say
// a member refused it something of group.
func forbiddenLines(t *testing.T, log, group string) int {
	t.Helper()
	b, err := os.ReadFile(log)
	require.NoError(t, err, "the controller manager's log")
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, group) && strings.Contains(strings.ToLower(line), "forbidden") {
			n++
		}
	}
	return n
}
