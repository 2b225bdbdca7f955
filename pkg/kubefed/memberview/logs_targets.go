package memberview

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// logTarget is what kubefed logs reads: a pod, the pods of a workload, or
// the pods a label selector matches.
type logTarget struct {
	// kind is "pod", a workload kind (deployment, ...), or "" for selector.
	kind     string
	name     string
	selector string
}

// logKinds are the kinds logs takes as TYPE/NAME, by every name kubectl
// knows them by.
var logKinds = map[string]string{
	"pod": "pod", "pods": "pod", "po": "pod",
	"deployment": "deployment", "deployments": "deployment", "deploy": "deployment",
	"replicaset": "replicaset", "replicasets": "replicaset", "rs": "replicaset",
	"statefulset": "statefulset", "statefulsets": "statefulset", "sts": "statefulset",
	"daemonset": "daemonset", "daemonsets": "daemonset", "ds": "daemonset",
	"job": "job", "jobs": "job",
	"service": "service", "services": "service", "svc": "service",
}

// parseLogTarget reads the argument (POD or TYPE/NAME) and -l.
func parseLogTarget(arg, selector string) (logTarget, error) {
	switch {
	case arg == "" && selector == "":
		return logTarget{}, fmt.Errorf("name a pod, TYPE/NAME (e.g. deploy/web) or -l SELECTOR")
	case arg != "" && selector != "":
		return logTarget{}, fmt.Errorf("give %s or -l %s, not both", arg, selector)
	case arg == "":
		if _, err := labels.Parse(selector); err != nil {
			return logTarget{}, fmt.Errorf("-l %q: %w", selector, err)
		}
		return logTarget{selector: selector}, nil
	}
	typ, name, ok := strings.Cut(arg, "/")
	if !ok {
		return logTarget{kind: "pod", name: arg}, nil
	}
	kind, known := logKinds[strings.ToLower(typ)]
	if !known {
		return logTarget{}, fmt.Errorf("%q: logs reads pods, deployments, replicasets, statefulsets, daemonsets, jobs and services, not %s", arg, typ)
	}
	if name == "" || strings.Contains(name, "/") {
		return logTarget{}, fmt.Errorf("%q: want TYPE/NAME", arg)
	}
	return logTarget{kind: kind, name: name}, nil
}

// String names the target in messages.
func (t logTarget) String() string {
	if t.kind == "" {
		return "pods matching " + t.selector
	}
	return t.kind + " " + t.name
}

// pods returns the target's pods in namespace of one member, sorted by
// name; none when the pod or workload is not there (a federated workload
// is in the clusters it is placed in, a pod in one).
func (t logTarget) pods(ctx context.Context, client kubernetes.Interface, namespace string) ([]corev1.Pod, error) {
	if t.kind == "pod" {
		pod, err := client.CoreV1().Pods(namespace).Get(ctx, t.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []corev1.Pod{*pod}, nil
	}
	selector := t.selector
	if t.kind != "" {
		s, err := t.workloadSelector(ctx, client, namespace)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		selector = s.String()
	}
	list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	pods := list.Items
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return pods, nil
}

// workloadSelector reads the selector of the target workload's pods.
func (t logTarget) workloadSelector(ctx context.Context, client kubernetes.Interface, namespace string) (labels.Selector, error) {
	var selector *metav1.LabelSelector
	get := metav1.GetOptions{}
	switch t.kind {
	case "deployment":
		obj, err := client.AppsV1().Deployments(namespace).Get(ctx, t.name, get)
		if err != nil {
			return nil, err
		}
		selector = obj.Spec.Selector
	case "replicaset":
		obj, err := client.AppsV1().ReplicaSets(namespace).Get(ctx, t.name, get)
		if err != nil {
			return nil, err
		}
		selector = obj.Spec.Selector
	case "statefulset":
		obj, err := client.AppsV1().StatefulSets(namespace).Get(ctx, t.name, get)
		if err != nil {
			return nil, err
		}
		selector = obj.Spec.Selector
	case "daemonset":
		obj, err := client.AppsV1().DaemonSets(namespace).Get(ctx, t.name, get)
		if err != nil {
			return nil, err
		}
		selector = obj.Spec.Selector
	case "job":
		obj, err := client.BatchV1().Jobs(namespace).Get(ctx, t.name, get)
		if err != nil {
			return nil, err
		}
		selector = obj.Spec.Selector
	case "service":
		obj, err := client.CoreV1().Services(namespace).Get(ctx, t.name, get)
		if err != nil {
			return nil, err
		}
		if len(obj.Spec.Selector) == 0 {
			return nil, fmt.Errorf("service %s has no selector", t.name)
		}
		return labels.SelectorFromSet(obj.Spec.Selector), nil
	default:
		return nil, fmt.Errorf("unknown kind %q", t.kind)
	}
	s, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return nil, fmt.Errorf("%s %s: its selector: %w", t.kind, t.name, err)
	}
	if s.Empty() {
		return nil, fmt.Errorf("%s %s has an empty selector", t.kind, t.name)
	}
	return s, nil
}
