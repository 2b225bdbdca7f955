package propagation

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/planner"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/replicapreferences"
)

// preferences weigh cluster1 twice as much as each other cluster.
const preferences = `{"rebalance":true,"clusters":{"cluster1":{"weight":2},"*":{"weight":1}}}`

// deploymentsTimeout bounds the wait for every replica to be ready.
const deploymentsTimeout = 15 * time.Minute

// deploymentNames are the Deployments of the deployments scenario.
var deploymentNames = objectNames("web-", deployments)

// deployment is a Deployment of replicas pods in namespace.
func deployment(namespace, name string, replicas int32, annotations map[string]string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Annotations: annotations},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
}

// plan divides a Deployment's replicas as its preferences say: what the
// reference writes to each member (and, once replica division lands with
// issue 6, what the federation writes).
func (bn *bench) plan(name string) map[string]int64 {
	p, err := replicapreferences.Parse(preferences)
	bn.check(err)
	prefs := planner.Preferences{Rebalance: p.Rebalance, Clusters: map[string]planner.ClusterPreference{}}
	for c, cp := range p.Clusters {
		prefs.Clusters[c] = planner.ClusterPreference{MinReplicas: cp.MinReplicas, MaxReplicas: cp.MaxReplicas, Weight: cp.Weight}
	}
	return prefs.Plan(planner.Input{Replicas: deploymentReplica, Clusters: bn.clusters, Key: refNamespace + "/" + name}).Desired()
}

// deployments creates Deployments of deploymentReplica replicas with a
// weighted preference and times until all their replicas are ready: for the
// reference, the planned share in each member; at the federation, until
// every federated Deployment's status (summed over the members) says so.
func (bn *bench) deployments(ctx context.Context) {
	// The reference: each member gets its planned share.
	start := time.Now()
	refPods := int64(0)
	plans := map[string]map[string]int64{}
	for _, name := range deploymentNames {
		plans[name] = bn.plan(name)
		for _, n := range plans[name] {
			refPods += n
		}
	}
	bn.check(bn.refEverywhere(len(deploymentNames), func(c string, i int) error {
		name := deploymentNames[i]
		replicas := plans[name][c]
		if replicas == 0 {
			return nil
		}
		u, err := toUnstructured(deployment(refNamespace, name, int32(replicas), nil))
		if err != nil {
			return err
		}
		return bn.refApply(ctx, c, deploymentsResource, u)
	}))
	bn.check(poll.Until(ctx, deploymentsTimeout, "the reference's Deployments ready in every member", func(ctx context.Context) error {
		for _, c := range bn.clusters {
			list, err := bn.watchers[c].AppsV1().Deployments(refNamespace).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				return err
			}
			ready := 0
			for _, d := range list.Items {
				if d.Status.ObservedGeneration >= d.Generation && d.Status.ReadyReplicas == *d.Spec.Replicas {
					ready++
				}
			}
			want := 0
			for _, p := range plans {
				if p[c] > 0 {
					want++
				}
			}
			if ready < want {
				return fmt.Errorf("%s: %d of %d ready", c, ready, want)
			}
		}
		return nil
	}))
	refTook := time.Since(start)

	// The federation.
	m := bn.meter()
	start = time.Now()
	annotations := map[string]string{federationv1beta1.DeploymentPreferencesAnnotation: preferences}
	bn.check(parallel(len(deploymentNames), fedWriters, func(i int) error {
		_, err := bn.fed.AppsV1().Deployments(fedNamespace).Create(ctx, deployment(fedNamespace, deploymentNames[i], deploymentReplica, annotations), metav1.CreateOptions{})
		return err
	}))
	var summed int64
	bn.check(poll.Until(ctx, deploymentsTimeout, "every federated Deployment to report all its replicas ready", func(ctx context.Context) (err error) {
		summed, err = allDeploymentsReady(ctx, bn.fed, fedNamespace)
		return err
	}))
	fedTook := time.Since(start)
	bn.cost(scenarioDeployments, int(summed), m)
	bn.add(scenarioDeployments, fmt.Sprintf("seconds until all ready (pods: fed %d, ref %d)", summed, refPods), fedTook.Seconds(), refTook.Seconds())
	if summed != refPods {
		bn.note(fmt.Sprintf("deployments, %d clusters: the federation ran %d replicas where the weighted division runs %d: "+
			"each member gets the full replicas until replica division lands (issue 6)", len(bn.clusters), summed, refPods))
	}
}

// allDeploymentsReady returns the ready replicas of the scenario's
// Deployments in namespace, or an error until each reports all its
// replicas ready for its current generation.
func allDeploymentsReady(ctx context.Context, client kubernetes.Interface, namespace string) (int64, error) {
	list, err := client.AppsV1().Deployments(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	ready, sum := 0, int64(0)
	for _, d := range list.Items {
		s := d.Status
		sum += int64(s.ReadyReplicas)
		if s.ObservedGeneration >= d.Generation && s.ReadyReplicas >= *d.Spec.Replicas && s.ReadyReplicas == s.Replicas {
			ready++
		}
	}
	if ready < len(deploymentNames) {
		return 0, fmt.Errorf("%d of %d ready, %d replicas ready in all", ready, len(deploymentNames), sum)
	}
	return sum, nil
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}
