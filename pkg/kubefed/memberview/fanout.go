package memberview

import (
	"context"
	"sync"
	"time"
)

// maxConcurrentMembers bounds how many members are asked at once.
const maxConcurrentMembers = 32

// answer is what one member answered.
type answer[T any] struct {
	cluster string
	value   T
	err     error
}

// fanOut calls ask for every cluster concurrently (at most
// maxConcurrentMembers at a time), each call with its own timeout, and
// returns the answers in the order of clusters. A slow or failing member
// delays or fails only its own answer.
func fanOut[T any](ctx context.Context, clusters []string, timeout time.Duration,
	ask func(ctx context.Context, cluster string) (T, error)) []answer[T] {
	answers := make([]answer[T], len(clusters))
	slots := make(chan struct{}, maxConcurrentMembers)
	var wg sync.WaitGroup
	for i, cluster := range clusters {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			v, err := ask(ctx, cluster)
			answers[i] = answer[T]{cluster: cluster, value: v, err: err}
		})
	}
	wg.Wait()
	return answers
}
