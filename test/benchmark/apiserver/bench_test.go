package apiserver

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/federation-v1/federation/pkg/embeddedetcd"
)

// The workload: requests per request type and server, from this many
// concurrent clients, and the size of the listed collection.
const (
	requests = 2000
	workers  = 8
	listSize = 1000
	lists    = 100
	rounds   = 3
)

// BenchmarkAgainstKubeAPIServer sends the same requests to
// federation-apiserver and to kube-apiserver of the same Kubernetes version,
// both on one etcd, one server after the other, and prints per request
// type the throughput, p50 and p99 latency of both and their ratios. The
// workload is fixed (requests, workers): run it once, with -benchtime 1x.
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
		for _, ns := range []string{"bench", "bench-list", "bench-watch"} {
			if _, err := s.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				b.Fatalf("%s: creating namespace %s: %v", s.name, ns, err)
			}
		}
		if _, err := measure(listSize, workers, func(i int) error {
			_, err := s.client.CoreV1().ConfigMaps("bench-list").Create(ctx, configMap(fmt.Sprintf("cm-%d", i)), metav1.CreateOptions{})
			return err
		}); err != nil {
			b.Fatalf("%s: filling the list namespace: %v", s.name, err)
		}
		if _, err := s.client.CoreV1().ConfigMaps("bench").Create(ctx, configMap("get-me"), metav1.CreateOptions{}); err != nil {
			b.Fatalf("%s: creating the configmap to get: %v", s.name, err)
		}
	}

	seq := 0 // numbers the rounds of the writing request types, so that names never repeat
	ops := []struct {
		name string
		n    int
		run  func(s *server, n int) (figures, error)
	}{
		{"create configmap", requests, func(s *server, n int) (figures, error) {
			seq++
			round := seq
			return measure(n, workers, func(i int) error {
				_, err := s.client.CoreV1().ConfigMaps("bench").Create(ctx, configMap(fmt.Sprintf("new-%d-%d", round, i)), metav1.CreateOptions{})
				return err
			})
		}},
		{"get configmap", requests, func(s *server, n int) (figures, error) {
			return measure(n, workers, func(int) error {
				_, err := s.client.CoreV1().ConfigMaps("bench").Get(ctx, "get-me", metav1.GetOptions{})
				return err
			})
		}},
		{fmt.Sprintf("list %d configmaps", listSize), lists, func(s *server, n int) (figures, error) {
			return measure(n, workers, func(int) error {
				_, err := s.client.CoreV1().ConfigMaps("bench-list").List(ctx, metav1.ListOptions{})
				return err
			})
		}},
		{"watch delivery (create to event)", requests, func(s *server, n int) (figures, error) {
			seq++
			return measureWatch(ctx, s, "bench-watch", fmt.Sprintf("w%d-", seq), n, workers)
		}},
	}
	fmt.Printf("\nmedians of %d rounds\n%-34s %14s %14s %7s %10s %10s %7s %10s %10s %7s\n", rounds, "request ("+strconv.Itoa(workers)+" clients)",
		"fed req/s", "kube req/s", "ratio", "fed p50", "kube p50", "ratio", "fed p99", "kube p99", "ratio")
	for _, op := range ops {
		// Rounds alternate which server goes first, and each figure is the
		// median of its rounds, so that the machine's other load and warm
		// caches favour neither.
		var got [2][]figures
		for r := range rounds {
			for k := range servers {
				j := (k + r) % len(servers)
				f, err := op.run(servers[j], op.n)
				if err != nil {
					b.Fatalf("%s %s: %v", servers[j].name, op.name, err)
				}
				got[j] = append(got[j], f)
			}
		}
		fed, kube := median(got[0]), median(got[1])
		fmt.Printf("%-34s %14.0f %14.0f %7.2f %10s %10s %7.2f %10s %10s %7.2f\n", op.name,
			fed.throughput, kube.throughput, fed.throughput/kube.throughput,
			fed.p50.Round(time.Microsecond), kube.p50.Round(time.Microsecond), float64(fed.p50)/float64(kube.p50),
			fed.p99.Round(time.Microsecond), kube.p99.Round(time.Microsecond), float64(fed.p99)/float64(kube.p99))
	}
	for _, s := range servers {
		rss, err := s.process.RSSBytes()
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("%s-apiserver resident memory: %.0f MiB\n", s.name, float64(rss)/(1<<20))
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
