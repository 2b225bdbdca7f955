package membercluster

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	coreinformers "k8s.io/client-go/informers/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	fedinformers "github.com/federation-v1/federation/pkg/generated/informers/externalversions/federation/v1beta1"
	fedlisters "github.com/federation-v1/federation/pkg/generated/listers/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/queueworker"
)

// NamespacesResource is watched in every member, so that namespaced types can
// tell where their namespace already is.
var NamespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// Handler receives what happens in the members.
type Handler interface {
	// MemberChanged is called for an add, update or delete of a labelled
	// object of resource gvr in cluster.
	MemberChanged(cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured)
	// ClustersChanged is called when the set of usable clusters or their
	// labels changed: every federated object must be looked at again.
	ClustersChanged()
}

// Manager owns a client and label-filtered caches per Ready member cluster:
// it starts them when the cluster becomes Ready, stops them when it is no
// longer Ready or is deleted, and feeds member events to the handlers.
type Manager struct {
	federation string
	// federationUID tells this federation from another of the same name.
	federationUID string
	clusters      fedlisters.ClusterLister
	secrets       corelisters.SecretLister
	synced        []cache.InformerSynced
	queue         workqueue.TypedRateLimitingInterface[string]
	// newClient makes a member's clients; tests replace it.
	newClient func(cluster *federationv1beta1.Cluster, cfg *rest.Config) (*Clients, error)
	// agentsVia reaches agent members (see AgentRESTConfig).
	agentsVia *rest.Config

	// watchMu orders Watch and Unwatch, which start and stop the members'
	// informers without holding mu (their handlers take it).
	watchMu sync.Mutex

	mu        sync.RWMutex
	resources []schema.GroupVersionResource
	// watchers are, by resource, its handlers and whether each reads only
	// metadata.
	watchers map[schema.GroupVersionResource]map[Handler]bool
	// metadataOnly are the resources whose caches hold only metadata (see
	// WatchMetadata).
	metadataOnly map[schema.GroupVersionResource]bool
	handlers     []Handler
	// streams are the resources streamed from every member (Stream).
	streams []*stream
	members map[string]*member
	// labels remembers each cluster's labels, to notice changes.
	labels map[string]string
	// started is when the manager was made: Settled gives Ready clusters
	// that have no caches yet settleTimeout from then.
	started time.Time
}

// NewManager builds a manager for the federation named federation whose
// identity is federationUID (see FederationUID).
func NewManager(federation, federationUID string, clusters fedinformers.ClusterInformer, secrets coreinformers.SecretInformer) (*Manager, error) {
	m := &Manager{
		federation:    federation,
		federationUID: federationUID,
		clusters:      clusters.Lister(),
		secrets:       secrets.Lister(),
		synced:        []cache.InformerSynced{clusters.Informer().HasSynced, secrets.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "members"}),
		newClient:    newClients,
		resources:    []schema.GroupVersionResource{NamespacesResource},
		metadataOnly: map[schema.GroupVersionResource]bool{NamespacesResource: true},
		watchers:     map[schema.GroupVersionResource]map[Handler]bool{},
		members:      map[string]*member{},
		labels:       map[string]string{},
		started:      time.Now(),
	}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			m.queue.Add(key)
		}
	}
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	}); err != nil {
		return nil, err
	}
	if _, err := secrets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { m.enqueueAll() }, UpdateFunc: func(_, _ any) { m.enqueueAll() },
	}); err != nil {
		return nil, err
	}
	return m, nil
}

// Federation is the federation's name, the value of federationv1beta1.FederationLabel.
func (m *Manager) Federation() string { return m.federation }

// FederationUID is the federation's identity, the value of
// FederationUIDLabel: the UID of its federation-system namespace at the
// federation apiserver. The member caches hold every object labelled with
// the federation's name, so another federation of the same name shows up
// there too: this tells them apart.
func (m *Manager) FederationUID() string { return m.federationUID }

// Watch adds a resource to watch in every member and a handler of its
// events: the members that run start its informer at once, those that
// come later with the others. Unwatch takes it back.
func (m *Manager) Watch(gvr schema.GroupVersionResource, h Handler) {
	m.watch(gvr, h, false)
}

// WatchMetadata is Watch for a handler that reads only the objects'
// metadata: unless another handler wants whole objects, the members send
// only metadata, as protobuf, and the cache holds only that (no Secret
// data in the controller manager's memory, and far less to encode, send
// and decode per change).
func (m *Manager) WatchMetadata(gvr schema.GroupVersionResource, h Handler) {
	m.watch(gvr, h, true)
}

func (m *Manager) watch(gvr schema.GroupVersionResource, h Handler, metadataOnly bool) {
	m.watchMu.Lock()
	defer m.watchMu.Unlock()
	m.mu.Lock()
	regs := m.watchers[gvr]
	if regs == nil {
		regs = map[Handler]bool{}
		m.watchers[gvr] = regs
	}
	if wasMetadataOnly, ok := regs[h]; ok {
		regs[h] = wasMetadataOnly && metadataOnly
	} else {
		regs[h] = metadataOnly
	}
	if !slices.Contains(m.resources, gvr) {
		m.resources = append(m.resources, gvr)
		m.metadataOnly[gvr] = metadataOnly
	} else if !metadataOnly {
		m.metadataOnly[gvr] = false
	}
	// A handler of several resources is told of cluster changes once.
	if !slices.Contains(m.handlers, h) {
		m.handlers = append(slices.Clip(m.handlers), h)
	}
	members := m.running()
	metadataOnly = m.metadataOnly[gvr]
	m.mu.Unlock()
	for _, mem := range members {
		mem.ensure(gvr, metadataOnly)
	}
}

// Unwatch takes back what Watch or WatchMetadata of gvr by h gave: h is
// no longer told of gvr (nor of anything once it watches nothing), and
// when h was gvr's last handler every member stops gvr's informer and
// drops its cache. It returns once the informers' goroutines have. The
// namespaces, which the manager itself watches, stay.
func (m *Manager) Unwatch(gvr schema.GroupVersionResource, h Handler) {
	m.watchMu.Lock()
	defer m.watchMu.Unlock()
	m.mu.Lock()
	regs := m.watchers[gvr]
	if _, ok := regs[h]; !ok {
		m.mu.Unlock()
		return
	}
	delete(regs, h)
	drop := len(regs) == 0 && gvr != NamespacesResource
	if len(regs) == 0 {
		delete(m.watchers, gvr)
	}
	// A resource cached whole stays so until it is dropped.
	if drop {
		m.resources = slices.DeleteFunc(slices.Clone(m.resources), func(r schema.GroupVersionResource) bool { return r == gvr })
		delete(m.metadataOnly, gvr)
	}
	if !m.watching(h) {
		// A new slice: memberChanged iterates the old one unlocked.
		m.handlers = slices.DeleteFunc(slices.Clone(m.handlers), func(o Handler) bool { return o == h })
	}
	members := m.running()
	m.mu.Unlock()
	if !drop {
		return
	}
	for _, mem := range members {
		mem.drop(gvr)
	}
	// Under the lock, so that no recordCacheSizes that saw the informers
	// sets their series again.
	m.mu.Lock()
	for name := range members {
		forgetCacheSize(name, gvr)
	}
	m.mu.Unlock()
}

// watching reports whether h watches any resource. Called with m.mu held.
func (m *Manager) watching(h Handler) bool {
	for _, regs := range m.watchers {
		if _, ok := regs[h]; ok {
			return true
		}
	}
	return false
}

// running returns the members that run, by name. Called with m.mu held.
func (m *Manager) running() map[string]*member {
	return maps.Clone(m.members)
}

// RestartUnsynced starts again a member's informer of gvr that has not
// synced, for when the member has just begun to serve gvr (its CRD
// appeared there): the informer lists at once instead of after its
// back-off.
func (m *Manager) RestartUnsynced(cluster string, gvr schema.GroupVersionResource) {
	if mem := m.member(cluster); mem != nil {
		mem.restartUnsynced(gvr)
	}
}

// Forbidden reports whether a member's cache of gvr has not synced because
// the federation may not read gvr there: nothing of ours can be there.
func (m *Manager) Forbidden(cluster string, gvr schema.GroupVersionResource) bool {
	if mem := m.member(cluster); mem != nil {
		return mem.forbidden(gvr)
	}
	return false
}

// Unserved reports whether a member's cache of gvr has not synced because
// the member does not serve gvr (its last list was NotFound: no CRD of it
// there yet): nothing can be there.
func (m *Manager) Unserved(cluster string, gvr schema.GroupVersionResource) bool {
	if mem := m.member(cluster); mem != nil {
		return mem.unserved(gvr)
	}
	return false
}

// Informers counts the informers a member runs, 0 for a cluster that has
// none.
func (m *Manager) Informers(cluster string) int {
	if mem := m.member(cluster); mem != nil {
		return mem.informerCount()
	}
	return 0
}

func (m *Manager) enqueueAll() {
	list, err := m.clusters.List(labels.Everything())
	if err != nil {
		return
	}
	for _, c := range list {
		m.queue.Add(c.Name)
	}
}

// Run keeps the members' caches in step with the clusters until ctx ends.
func (m *Manager) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer m.queue.ShutDown()
	if !cache.WaitForNamedCacheSync("members", ctx.Done(), m.synced...) {
		return fmt.Errorf("member manager: caches did not sync")
	}
	var sizes sync.WaitGroup
	sizes.Go(func() { wait.UntilWithContext(ctx, func(context.Context) { m.recordCacheSizes() }, 5*time.Second) })
	queueworker.RunWorkers(ctx, 1, m.queue, m.worker)
	sizes.Wait()
	m.mu.Lock()
	members := m.members
	m.members = map[string]*member{}
	m.mu.Unlock()
	// Outside the lock: the informers' handlers take it.
	for name, mem := range members {
		mem.stop()
		forgetCacheSizes(name, mem)
	}
	return nil
}

func (m *Manager) worker(ctx context.Context) {
	queueworker.Run(ctx, m.queue, queueworker.Handlers[string]{Sync: m.sync, What: "Starting a member's caches", KeyName: "cluster"})
}

// sync starts, restarts or stops the caches of one cluster.
func (m *Manager) sync(ctx context.Context, name string) error {
	cluster, err := m.clusters.Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	ready := err == nil && IsReady(cluster)
	m.mu.Lock()
	old := m.members[name]
	labelsChanged := false
	if err == nil {
		now := labels.Set(cluster.Labels).String()
		labelsChanged = m.labels[name] != now
		m.labels[name] = now
	} else {
		delete(m.labels, name)
	}
	m.mu.Unlock()

	if !ready {
		if old != nil {
			klog.FromContext(ctx).Info("Stopping a member's caches", "cluster", name)
			m.remove(name, old)
			m.notifyClusters()
		}
		return nil
	}
	cfg, identity, err := m.config(cluster)
	if err != nil {
		return err
	}
	if old != nil && old.identity == identity {
		if labelsChanged {
			m.notifyClusters()
		}
		return nil
	}
	client, err := m.newClient(cluster, cfg)
	if err != nil {
		return err
	}
	if old != nil {
		m.remove(name, old)
	}
	m.mu.Lock()
	mem := newMember(ctx, name, identity, client, m.federation, m.resources, m.metadataOnly, m.memberChanged)
	m.members[name] = mem
	for _, s := range m.streams {
		mem.startStream(s)
	}
	m.mu.Unlock()
	klog.FromContext(ctx).Info("Starting a member's caches", "cluster", name)
	go func() {
		if mem.waitSynced() {
			m.notifyClusters()
		}
	}()
	return nil
}

// remove stops every informer of a member that goes, and returns once
// their goroutines have.
func (m *Manager) remove(name string, mem *member) {
	m.mu.Lock()
	if m.members[name] == mem {
		delete(m.members, name)
	}
	m.mu.Unlock()
	mem.stop()
	forgetCacheSizes(name, mem)
}

// ReachAgentsThrough sets the manager's own configuration for the
// federation apiserver, through which it reaches agent members.
func (m *Manager) ReachAgentsThrough(federation *rest.Config) { m.agentsVia = federation }

// config returns how to reach cluster, and an identity that changes when
// its address or credentials do.
func (m *Manager) config(cluster *federationv1beta1.Cluster) (*rest.Config, string, error) {
	if federationv1beta1.IsAgent(cluster) {
		cfg, err := AgentRESTConfig(m.agentsVia, cluster)
		return cfg, "agent:" + cluster.Name, err
	}
	secret, err := m.secret(cluster)
	if err != nil {
		return nil, "", err
	}
	identity, err := identityOf(cluster, secret)
	if err != nil {
		return nil, "", err
	}
	cfg, err := RESTConfig(cluster, secret)
	return cfg, identity, err
}

func (m *Manager) secret(cluster *federationv1beta1.Cluster) (*corev1.Secret, error) {
	if cluster.Spec.SecretRef == nil || cluster.Spec.SecretRef.Name == "" {
		return nil, fmt.Errorf("cluster %s: spec.secretRef names no credentials Secret", cluster.Name)
	}
	s, err := m.secrets.Secrets(federationv1beta1.SystemNamespace).Get(cluster.Spec.SecretRef.Name)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: credentials Secret %s/%s: %w", cluster.Name, federationv1beta1.SystemNamespace, cluster.Spec.SecretRef.Name, err)
	}
	return s, nil
}

func (m *Manager) memberChanged(cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	m.mu.RLock()
	handlers := m.handlers
	m.mu.RUnlock()
	for _, h := range handlers {
		h.MemberChanged(cluster, gvr, obj)
	}
}

func (m *Manager) notifyClusters() {
	m.mu.RLock()
	handlers := m.handlers
	m.mu.RUnlock()
	for _, h := range handlers {
		h.ClustersChanged()
	}
}

// Clusters returns, sorted by name, the Ready clusters whose namespaces
// cache has synced: the clusters objects can be placed in now.
func (m *Manager) Clusters() []*federationv1beta1.Cluster {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*federationv1beta1.Cluster
	for name, mem := range m.members {
		if c, ok := m.usable(name, mem); ok {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Usable reports whether one cluster is among Clusters, without building
// the list.
func (m *Manager) Usable(cluster string) bool {
	m.mu.RLock()
	mem, ok := m.members[cluster]
	m.mu.RUnlock()
	_, usable := m.usable(cluster, mem)
	return ok && usable
}

// usable returns the Cluster of a member that is Ready and whose
// namespaces cache has synced.
func (m *Manager) usable(name string, mem *member) (*federationv1beta1.Cluster, bool) {
	if mem == nil || !mem.hasSynced() {
		return nil, false
	}
	c, err := m.clusters.Get(name)
	return c, err == nil && IsReady(c)
}

// settleTimeout bounds how long Settled waits for a Ready cluster's caches
// to sync: a member that does not answer must not hold up the others' work
// for longer (its Cluster turns Offline at the next health check anyway).
const settleTimeout = 30 * time.Second

// Settled reports whether every cluster whose status says Ready is usable
// (its caches synced), or was given settleTimeout to become so. Until then
// Clusters leaves out members that are only starting, as after the
// controller manager starts (an upgrade, a failover) or a member's
// credential changes: a replica plan made from it would move their
// replicas away, and write every member twice.
func (m *Manager) Settled() bool {
	all, err := m.clusters.List(labels.Everything())
	if err != nil {
		return false
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, c := range all {
		if !IsReady(c) {
			continue
		}
		since := m.started
		mem := m.members[c.Name]
		if mem != nil {
			if mem.hasSynced() {
				continue
			}
			since = mem.started
		}
		if time.Since(since) < settleTimeout {
			return false
		}
	}
	return true
}

// AllClusters returns every registered cluster, usable or not.
func (m *Manager) AllClusters() ([]*federationv1beta1.Cluster, error) {
	return m.clusters.List(labels.Everything())
}

// member is the member cluster of that name, nil when it has no caches.
func (m *Manager) member(cluster string) *member {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.members[cluster]
}

// Get returns the labelled copy of an object in a member's cache.
func (m *Manager) Get(cluster string, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool) {
	mem := m.member(cluster)
	if mem == nil {
		return nil, false
	}
	return mem.get(gvr, namespace, name)
}

// List returns the labelled objects of gvr in a member's cache, in
// namespace, that match selector.
func (m *Manager) List(cluster string, gvr schema.GroupVersionResource, namespace string, selector labels.Selector) []*unstructured.Unstructured {
	mem := m.member(cluster)
	if mem == nil {
		return nil
	}
	return mem.list(gvr, namespace, selector)
}

// ListMetadata returns the same objects as List, as they are cached (typed
// metadata for metadata-only resources): for callers that read only their
// metadata, without List's conversion of each.
func (m *Manager) ListMetadata(cluster string, gvr schema.GroupVersionResource, namespace string, selector labels.Selector) []metav1.Object {
	mem := m.member(cluster)
	if mem == nil {
		return nil
	}
	return mem.listMetadata(gvr, namespace, selector)
}

// Synced reports whether a usable member's cache of gvr has synced: until
// then (or forever, when the member lacks the API) its absence of a copy
// proves nothing.
func (m *Manager) Synced(cluster string, gvr schema.GroupVersionResource) bool {
	mem := m.member(cluster)
	return mem != nil && mem.synced(gvr)
}

// Client returns the dynamic client of a usable member.
func (m *Manager) Client(cluster string) (dynamic.Interface, error) {
	clients, err := m.clients(cluster)
	if err != nil {
		return nil, err
	}
	return clients.Dynamic, nil
}

// clients returns the clients of a usable member.
func (m *Manager) clients(cluster string) (*Clients, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	mem := m.members[cluster]
	if mem == nil {
		return nil, fmt.Errorf("cluster %s is not Ready", cluster)
	}
	return mem.clients, nil
}

// Apply applies obj to a usable member, server-side as fieldManager taking
// over conflicting fields, and returns the metadata of what the member
// stored. The answer is asked for as PartialObjectMetadata in protobuf, not
// the whole object in JSON: callers read only its metadata, and decoding
// the answers was an eighth of the controller manager's burst profile.
func (m *Manager) Apply(ctx context.Context, cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, fieldManager string) (*metav1.PartialObjectMetadata, error) {
	clients, err := m.clients(cluster)
	if err != nil {
		return nil, err
	}
	body, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return clients.Metadata.Resource(gvr).Namespace(obj.GetNamespace()).
		Patch(ctx, obj.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: fieldManager, Force: ptr.To(true)})
}

// ListLive lists, from the member itself, the metadata of its objects of
// gvr in namespace that match a label selector: for checks that look at
// objects our label-filtered caches do not hold.
func (m *Manager) ListLive(ctx context.Context, cluster string, gvr schema.GroupVersionResource, namespace, selector string) ([]metav1.PartialObjectMetadata, error) {
	clients, err := m.clients(cluster)
	if err != nil {
		return nil, err
	}
	list, err := clients.Metadata.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// IsReady reports whether the cluster's Ready condition is True.
func IsReady(c *federationv1beta1.Cluster) bool { return federationv1beta1.IsClusterReady(c) }

// identityOf changes when a member's address or credentials do: its
// client and caches are then made again.
func identityOf(cluster *federationv1beta1.Cluster, secret *corev1.Secret) (string, error) {
	server, err := ServerAddress(cluster)
	if err != nil {
		return "", err
	}
	return server + "/" + string(secret.UID) + "/" + secret.ResourceVersion, nil
}

// Clients are a member's clients. They share one rate limit
// (ClientQPS, ClientBurst).
type Clients struct {
	Dynamic  dynamic.Interface
	Metadata metadata.Interface
	// MetadataREST is the REST client under Metadata (protobuf
	// PartialObjectMetadata answers), for the calls package metadata lacks
	// (Create); Discovery lists what the member serves.
	MetadataREST rest.Interface
	Discovery    discovery.DiscoveryInterface
}

// newClients builds a member's clients.
func newClients(cluster *federationv1beta1.Cluster, cfg *rest.Config) (*Clients, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = ClientQPS, ClientBurst
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(ClientQPS, ClientBurst)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cluster.Name, err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cluster.Name, err)
	}
	metaREST, err := metadataREST(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cluster.Name, err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cluster.Name, err)
	}
	return &Clients{Dynamic: dyn, Metadata: meta, MetadataREST: metaREST, Discovery: disc}, nil
}
