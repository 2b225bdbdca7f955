package faults_test

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The objects of a case: ConfigMaps cm-0000.. and Deployments web-00.., in
// the case's own namespace. A write's generation is in the object (data
// "gen", the pod template's genAnnotation) so that a stale copy shows.
const (
	genAnnotation = "faults.test/gen"
	// payload makes a ConfigMap about as big as a small configuration file.
	payload = "0123456789abcdef"
)

func configMapName(i int) string  { return fmt.Sprintf("cm-%04d", i) }
func deploymentName(i int) string { return fmt.Sprintf("web-%02d", i) }

// configMapData is what ConfigMap name holds at generation gen.
func configMapData(name string, gen int) map[string]string {
	return map[string]string{"gen": strconv.Itoa(gen), "payload": name + ":" + strings.Repeat(payload, 16)}
}

func newConfigMap(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Data:       configMapData(name, 1),
	}
}

// replicasOf is a Deployment's count at generation gen: 2 or 3, small
// because members are simulated and every pod costs.
func replicasOf(i, gen int) int32 { return int32(2 + (i+gen)%2) }

const pauseImage = "registry.k8s.io/pause:3.10"

func newDeployment(ns string, i int) *appsv1.Deployment {
	name := deploymentName(i)
	labels := map[string]string{"app": name}
	replicas := replicasOf(i, 1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{genAnnotation: "1"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: pauseImage}}},
			},
		},
	}
}

// deploymentState is what the verifier compares of a Deployment: its count
// and the part of its pod template that we wrote (members add their
// defaults and the federation its label, so the whole template never
// equals).
type deploymentState struct {
	Replicas int32
	Template string
}

// templateFingerprint is the written part of a pod template: the
// generation annotation and each container's name and image.
func templateFingerprint(t corev1.PodTemplateSpec) string {
	parts := []string{genAnnotation + "=" + t.Annotations[genAnnotation]}
	for _, c := range t.Spec.Containers {
		parts = append(parts, c.Name+"="+c.Image)
	}
	sort.Strings(parts[1:])
	return strings.Join(parts, ",")
}

func stateOf(d *appsv1.Deployment) deploymentState {
	s := deploymentState{Template: templateFingerprint(d.Spec.Template)}
	if d.Spec.Replicas != nil {
		s.Replicas = *d.Spec.Replicas
	} else {
		s.Replicas = 1
	}
	return s
}
