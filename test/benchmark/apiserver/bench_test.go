package apiserver

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/federation-v1/federation/pkg/embeddedetcd"
)

// listSize is how many ConfigMaps the list benchmark lists.
const listSize = 100

// BenchmarkAgainstKubeAPIServer runs each request type against both servers
// in turn, b.N times each, and reports per server the mean latency
// (fed-ns/op, kube-ns/op), their ratio (fed/kube) and at the end the
// resident memory of each server.
func BenchmarkAgainstKubeAPIServer(b *testing.B) {
	kubeBinary := kubeAPIServerPath(b)
	dir := b.TempDir()
	etcd, err := embeddedetcd.Start(filepath.Join(dir, "etcd"), 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(etcd.Stop)
	fed := startServer(b, "federation", buildFederationAPIServer(b, dir), dir, etcd.ClientURL(),
		"--data-dir="+filepath.Join(dir, "federation-data"))
	kube := startServer(b, "kube", kubeBinary, dir, etcd.ClientURL(), kubeAPIServerFlags(b, dir)...)
	servers := []*server{fed, kube}

	ctx := context.Background()
	for _, s := range servers {
		for _, ns := range []string{"bench", "bench-list"} {
			if _, err := s.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				b.Fatalf("%s: creating namespace %s: %v", s.name, ns, err)
			}
		}
		for i := range listSize {
			if _, err := s.client.CoreV1().ConfigMaps("bench-list").Create(ctx, configMap(fmt.Sprintf("cm-%d", i)), metav1.CreateOptions{}); err != nil {
				b.Fatalf("%s: creating configmap %d: %v", s.name, i, err)
			}
		}
		if _, err := s.client.CoreV1().ConfigMaps("bench").Create(ctx, configMap("get-me"), metav1.CreateOptions{}); err != nil {
			b.Fatalf("%s: creating the configmap to get: %v", s.name, err)
		}
	}

	ops := []struct {
		name string
		do   func(s *server, i int) error
	}{
		{"create-configmap", func(s *server, i int) error {
			_, err := s.client.CoreV1().ConfigMaps("bench").Create(ctx, configMap(fmt.Sprintf("new-%d", i)), metav1.CreateOptions{})
			return err
		}},
		{"get-configmap", func(s *server, _ int) error {
			_, err := s.client.CoreV1().ConfigMaps("bench").Get(ctx, "get-me", metav1.GetOptions{})
			return err
		}},
		{"list-100-configmaps", func(s *server, _ int) error {
			_, err := s.client.CoreV1().ConfigMaps("bench-list").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"create-deployment", func(s *server, i int) error {
			_, err := s.client.AppsV1().Deployments("bench").Create(ctx, deployment(fmt.Sprintf("d-%d", i)), metav1.CreateOptions{})
			return err
		}},
	}
	round := 0
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			round++
			spent := make([]time.Duration, len(servers))
			for i := 0; i < b.N; i++ {
				for j, s := range servers {
					start := time.Now()
					if err := op.do(s, round*1_000_000+i); err != nil {
						b.Fatalf("%s %s: %v", s.name, op.name, err)
					}
					spent[j] += time.Since(start)
				}
			}
			fedNs := float64(spent[0].Nanoseconds()) / float64(b.N)
			kubeNs := float64(spent[1].Nanoseconds()) / float64(b.N)
			b.ReportMetric(fedNs, "fed-ns/op")
			b.ReportMetric(kubeNs, "kube-ns/op")
			b.ReportMetric(fedNs/kubeNs, "fed/kube")
		})
	}
	for _, s := range servers {
		rss, err := s.process.RSSBytes()
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%s-apiserver resident memory: %.0f MiB", s.name, float64(rss)/(1<<20))
	}
}

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"key": "value"}}
}

func deployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
}
