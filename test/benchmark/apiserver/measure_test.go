package apiserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// figures are what one request type achieved against one server.
type figures struct {
	// throughput in requests (or delivered events) per second.
	throughput float64
	p50, p99   time.Duration
}

// percentiles sorts latencies and returns their 50th and 99th percentile.
func percentiles(latencies []time.Duration) (time.Duration, time.Duration) {
	slices.Sort(latencies)
	at := func(p int) time.Duration { return latencies[min(len(latencies)-1, len(latencies)*p/100)] }
	return at(50), at(99)
}

// measure runs do n times from workers goroutines and times each call.
func measure(n, workers int, do func(i int) error) (figures, error) {
	latencies := make([]time.Duration, n)
	var next atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t := time.Now()
				if err := do(i); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				latencies[i] = time.Since(t)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, ok := firstErr.Load().(error); ok {
		return figures{}, err
	}
	p50, p99 := percentiles(latencies)
	return figures{throughput: float64(n) / elapsed.Seconds(), p50: p50, p99: p99}, nil
}

// measureWatch creates n ConfigMaps from workers goroutines while a watch
// is open, and times each from the start of its create request to the
// arrival of its ADDED event.
func measureWatch(ctx context.Context, s *server, namespace, prefix string, n, workers int) (figures, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	w, err := s.client.CoreV1().ConfigMaps(namespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return figures{}, err
	}
	defer w.Stop()
	sent := make([]time.Time, n)
	var mu sync.Mutex
	latencies := make([]time.Duration, 0, n)
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added {
				continue
			}
			var i int
			name := ev.Object.(*corev1.ConfigMap).Name
			if !strings.HasPrefix(name, prefix) {
				continue
			}
			if _, err := fmt.Sscanf(strings.TrimPrefix(name, prefix), "%d", &i); err != nil || i >= n {
				continue
			}
			mu.Lock()
			latencies = append(latencies, time.Since(sent[i]))
			got := len(latencies)
			mu.Unlock()
			if got == n {
				done <- nil
				return
			}
		}
		done <- fmt.Errorf("%s: the watch ended before %d events arrived", s.name, n)
	}()
	_, err = measure(n, workers, func(i int) error {
		mu.Lock()
		sent[i] = time.Now()
		mu.Unlock()
		_, err := s.client.CoreV1().ConfigMaps(namespace).Create(ctx, configMap(fmt.Sprintf("%s%d", prefix, i)), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return figures{}, err
	}
	if err := <-done; err != nil {
		return figures{}, err
	}
	elapsed := time.Since(start)
	p50, p99 := percentiles(latencies)
	return figures{throughput: float64(n) / elapsed.Seconds(), p50: p50, p99: p99}, nil
}

// median returns, figure by figure, the median of the rounds.
func median(rounds []figures) figures {
	pick := func(get func(figures) float64) float64 {
		vals := make([]float64, len(rounds))
		for i, r := range rounds {
			vals[i] = get(r)
		}
		slices.Sort(vals)
		return vals[len(vals)/2]
	}
	return figures{
		throughput: pick(func(f figures) float64 { return f.throughput }),
		p50:        time.Duration(pick(func(f figures) float64 { return float64(f.p50) })),
		p99:        time.Duration(pick(func(f figures) float64 { return float64(f.p99) })),
	}
}
