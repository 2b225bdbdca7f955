package memberenv

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/federation-v1/federation/pkg/localprocess"
)

// Topology labels, both today's and the ones Federation v1 read.
const (
	ZoneLabel         = "topology.kubernetes.io/zone"
	RegionLabel       = "topology.kubernetes.io/region"
	LegacyZoneLabel   = "failure-domain.beta.kubernetes.io/zone"
	LegacyRegionLabel = "failure-domain.beta.kubernetes.io/region"
)

// nodeObjects returns the Node objects of a member: zones round-robin, the
// annotation kwok's stages expect on the nodes it fakes, and addresses that
// lead kube-apiserver to kwok's kubelet server (nodeStatus).
func (m *Member) nodeObjects() []*corev1.Node {
	spec := m.Spec
	nodes := make([]*corev1.Node, 0, spec.Nodes)
	for i := 0; i < spec.Nodes; i++ {
		name := fmt.Sprintf("%s-node-%d", spec.Name, i+1)
		zone := spec.Zones[i%len(spec.Zones)]
		nodes = append(nodes, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name: name,
				Labels: map[string]string{
					"kubernetes.io/hostname": name,
					"kubernetes.io/os":       "linux",
					"kubernetes.io/arch":     "amd64",
					"type":                   "kwok",
					ZoneLabel:                zone,
					RegionLabel:              spec.Region,
					LegacyZoneLabel:          zone,
					LegacyRegionLabel:        spec.Region,
				},
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			},
			// Kept on create: a kubelet registers its node with its status.
			Status: m.nodeStatus(name),
		})
	}
	return nodes
}

// ensureNodes creates the member's nodes that do not exist yet.
func ensureNodes(ctx context.Context, client kubernetes.Interface, m *Member) error {
	for _, n := range m.nodeObjects() {
		_, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", n.Name, err)
		}
	}
	return nil
}

// waitNodesReady waits until every node of m is Ready without a NoSchedule
// taint, so pods can be scheduled at once.
func (e *Environment) waitNodesReady(ctx context.Context, m *Member, client kubernetes.Interface) error {
	return localprocess.WaitFor(ctx, 90*time.Second, m.Spec.Name+" nodes Ready and untainted", m.Processes[Kwok], func() error {
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(nodes.Items) < m.Spec.Nodes {
			return fmt.Errorf("%d of %d nodes exist", len(nodes.Items), m.Spec.Nodes)
		}
		for _, n := range nodes.Items {
			if reason := notSchedulable(&n); reason != "" {
				return fmt.Errorf("node %s: %s", n.Name, reason)
			}
		}
		return nil
	})
}

// waitServiceAccount waits until m's default service account exists, so pods
// can be created in the default namespace.
func (e *Environment) waitServiceAccount(ctx context.Context, m *Member, client kubernetes.Interface) error {
	return localprocess.WaitFor(ctx, 60*time.Second, m.Spec.Name+" default service account", m.Processes[KubeControllerManager], func() error {
		_, err := client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

// notSchedulable says why pods cannot land on n, or "" when they can.
func notSchedulable(n *corev1.Node) string {
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready {
		return "not Ready"
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return "tainted " + t.Key
		}
	}
	return ""
}
