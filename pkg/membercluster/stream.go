package membercluster

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// StreamHandler receives a streamed resource's objects (see Stream).
type StreamHandler interface {
	// Streamed is told of every object of the resource a member lists,
	// adds or updates (not deletes), as the stream's transform left it.
	// It is called from the stream's own goroutine, which waits for it:
	// it must not block.
	Streamed(cluster string, obj any)
}

// StreamOptions say what a stream watches.
type StreamOptions struct {
	// FieldSelector narrows the watch at the member (type=Warning).
	FieldSelector string
	// Transform, if set, turns each object into what the handler gets,
	// before anything else holds it. It must accept its own output (a
	// relist may hand it an object it already transformed).
	Transform cache.TransformFunc
}

// stream is one resource streamed from every member.
type stream struct {
	gvr     schema.GroupVersionResource
	opts    StreamOptions
	handler StreamHandler
}

// runningStream is a stream's reflector in one member and what stops it.
type runningStream struct {
	cancel context.CancelFunc
	// done is closed when the reflector's goroutine has returned.
	done chan struct{}
}

func (r *runningStream) stop() {
	r.cancel()
	<-r.done
}

// Stream watches a resource in every usable member, unlike Watch
// without a label selector and without a cache: every object goes to h
// and nothing is kept, so that memory does not grow with what the members
// hold. For resources the federation did not label (the members' events),
// where h keeps only what concerns the federation. Streams are registered
// before Run; a member's streams start and stop with its caches.
func (m *Manager) Stream(gvr schema.GroupVersionResource, opts StreamOptions, h StreamHandler) {
	m.watchMu.Lock()
	defer m.watchMu.Unlock()
	s := &stream{gvr: gvr, opts: opts, handler: h}
	m.mu.Lock()
	m.streams = append(slices.Clip(m.streams), s)
	members := m.running()
	m.mu.Unlock()
	for _, mem := range members {
		mem.startStream(s)
	}
}

// startStream starts a stream's reflector in the member, until the member
// stops.
func (m *member) startStream(s *stream) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(m.ctx)
	client := m.clients.Dynamic.Resource(s.gvr)
	fields := s.opts.FieldSelector
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = fields
			return client.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = fields
			return client.Watch(ctx, o)
		},
	}
	name, handler := m.name, s.handler
	store := &passThroughStore{transform: s.opts.Transform, deliver: func(obj any) { handler.Streamed(name, obj) }}
	r := cache.NewReflectorWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, m.clients.Dynamic), &unstructured.Unstructured{}, store,
		cache.ReflectorOptions{Name: "member " + name + " stream of " + s.gvr.String()})
	run := &runningStream{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(run.done)
		r.RunWithContext(ctx)
	}()
	m.streams = append(m.streams, run)
}

// passThroughStore is a reflector's store that stores nothing: it hands
// every listed, added or updated object to deliver.
type passThroughStore struct {
	transform cache.TransformFunc
	deliver   func(any)
}

var _ cache.TransformingStore = &passThroughStore{}

func (s *passThroughStore) pass(obj any) error {
	if s.transform != nil {
		var err error
		if obj, err = s.transform(obj); err != nil {
			return err
		}
	}
	s.deliver(obj)
	return nil
}

func (s *passThroughStore) Add(obj any) error    { return s.pass(obj) }
func (s *passThroughStore) Update(obj any) error { return s.pass(obj) }
func (s *passThroughStore) Delete(any) error     { return nil }
func (s *passThroughStore) Resync() error        { return nil }

// Replace hands over a (re)list: what was seen before comes again, and the
// handler tells it apart.
func (s *passThroughStore) Replace(list []any, _ string) error {
	for _, obj := range list {
		if err := s.pass(obj); err != nil {
			return err
		}
	}
	return nil
}

// Transformer lets a watch-list's temporary store hold the transformed
// (small) objects while the initial list streams in.
func (s *passThroughStore) Transformer() cache.TransformFunc { return s.transform }
