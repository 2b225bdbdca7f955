package memberview

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// logStream is one container's log in one member.
type logStream struct {
	cluster, namespace, pod, container string
	// prefix starts each of its lines: [CLUSTER/POD], or
	// [CLUSTER/POD/CONTAINER] when several containers of the pod are read.
	prefix string
	// client reaches the member through the federation's proxy.
	client kubernetes.Interface
}

// planStreams returns the log streams of a member's pods: container's
// (-c; a pod without it is named in skipped), else every container of
// the pod.
func planStreams(cluster string, pods []corev1.Pod, container string) (streams []logStream, skipped []string) {
	for _, pod := range pods {
		var names []string
		if container != "" {
			if !hasContainer(&pod, container) {
				skipped = append(skipped, fmt.Sprintf("%s/%s has no container %s", cluster, pod.Name, container))
				continue
			}
			names = []string{container}
		} else {
			for _, c := range pod.Spec.Containers {
				names = append(names, c.Name)
			}
		}
		for _, name := range names {
			prefix := "[" + cluster + "/" + escapeControl(pod.Name) + "]"
			if len(names) > 1 {
				prefix = "[" + cluster + "/" + escapeControl(pod.Name) + "/" + escapeControl(name) + "]"
			}
			streams = append(streams, logStream{cluster: cluster, namespace: pod.Namespace, pod: pod.Name, container: name, prefix: prefix})
		}
	}
	return streams, skipped
}

// hasContainer says whether the pod has a container, init container or
// ephemeral container of that name.
func hasContainer(pod *corev1.Pod, name string) bool {
	match := func(c corev1.Container) bool { return c.Name == name }
	return slices.ContainsFunc(pod.Spec.Containers, match) || slices.ContainsFunc(pod.Spec.InitContainers, match) ||
		slices.ContainsFunc(pod.Spec.EphemeralContainers, func(c corev1.EphemeralContainer) bool { return c.Name == name })
}

// logOptions are what every stream asks of the member's kubelet.
type logOptions struct {
	follow     bool
	tail       int64
	since      time.Duration
	timestamps bool
	previous   bool
}

func (o logOptions) podLogOptions(container string) *corev1.PodLogOptions {
	opts := &corev1.PodLogOptions{Container: container, Follow: o.follow, Timestamps: o.timestamps, Previous: o.previous}
	if o.tail >= 0 {
		opts.TailLines = &o.tail
	}
	if o.since > 0 {
		seconds := int64(math.Ceil(o.since.Seconds()))
		opts.SinceSeconds = &seconds
	}
	return opts
}

// streamLogs reads the streams, at most limit at a time, and writes their
// lines to out as they come, each whole and prefixed. A stream that fails
// is named on errOut with its error. It returns when every stream has
// ended (at EOF, or when ctx is cancelled), with the number that failed.
func streamLogs(ctx context.Context, streams []logStream, opts logOptions, limit int, out, errOut io.Writer) int {
	w := &lineWriter{out: out}
	slots := make(chan struct{}, limit)
	var failed atomic.Int32
	var wg sync.WaitGroup
	for _, s := range streams {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return int(failed.Load())
		}
		wg.Go(func() {
			defer func() { <-slots }()
			if err := s.read(ctx, opts, w); err != nil && ctx.Err() == nil {
				failed.Add(1)
				w.writeLine(errOut, s.prefix, []byte("error: "+escapeControl(err.Error())+"\n"))
			}
		})
	}
	wg.Wait()
	return int(failed.Load())
}

// read copies one stream's lines to w.
func (s logStream) read(ctx context.Context, opts logOptions, w *lineWriter) error {
	body, err := s.client.CoreV1().Pods(s.namespace).GetLogs(s.pod, opts.podLogOptions(s.container)).Stream(ctx)
	if err != nil {
		return err
	}
	defer body.Close()
	r := bufio.NewReaderSize(body, 64*1024)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			w.writeLine(w.out, s.prefix, line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// lineWriter writes the lines of many streams, each in one piece.
type lineWriter struct {
	mu  sync.Mutex
	out io.Writer
}

// writeLine writes prefix, a space and line (ended with a newline) to out.
func (w *lineWriter) writeLine(out io.Writer, prefix string, line []byte) {
	buf := make([]byte, 0, len(prefix)+len(line)+2)
	buf = append(buf, prefix...)
	buf = append(buf, ' ')
	buf = append(buf, line...)
	if line[len(line)-1] != '\n' {
		buf = append(buf, '\n')
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = out.Write(buf)
}
