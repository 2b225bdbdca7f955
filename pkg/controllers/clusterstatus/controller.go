// Package clusterstatus is the cluster health controller: it probes every
// registered member cluster on an interval with the credentials from its
// Secret, and writes Ready/Offline conditions, zones and region to
// Cluster.status, recording an event at each transition.
package clusterstatus

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/clusterhealth"
	"github.com/federation-v1/federation/pkg/generated/clientset/versioned"
	fedinformers "github.com/federation-v1/federation/pkg/generated/informers/externalversions/federation/v1beta1"
	fedlisters "github.com/federation-v1/federation/pkg/generated/listers/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/queueworker"
	"github.com/federation-v1/federation/pkg/tunnel/wire"
)

// Name is the controller's name in --controllers.
const Name = "cluster"

// Options tune the probing.
type Options struct {
	// Period between two probes of a cluster.
	Period time.Duration
	// Timeout of one probe.
	Timeout time.Duration
	// Thresholds of consecutive probes before a verdict changes.
	Thresholds clusterhealth.Thresholds
	// Workers probing in parallel, so that slow clusters do not delay others.
	Workers int
}

// Controller probes member clusters and keeps Cluster.status current.
type Controller struct {
	// client writes Cluster status.
	client versioned.Interface
	// clusters and secrets are the informer caches; secrets are the
	// credentials in the federation-system namespace.
	clusters       fedlisters.ClusterLister
	secrets        corelisters.SecretLister
	clustersSynced cache.InformerSynced
	secretsSynced  cache.InformerSynced
	// queue holds cluster names; every sync puts its cluster back after Period.
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder
	opts     Options

	// trackers hold each cluster's verdict across probes; refusals the
	// message of each cluster's refused address or credentials, so that
	// each refusal is told once.
	mu       sync.Mutex
	trackers map[string]*clusterhealth.Tracker
	refusals map[string]string
	// agentsVia reaches agent members (membercluster.AgentRESTConfig).
	agentsVia *rest.Config
}

// New wires the controller to its informers. secrets must be limited to the
// federation-system namespace.
func New(client versioned.Interface, clusters fedinformers.ClusterInformer, secrets coreinformers.SecretInformer,
	recorder record.EventRecorder, opts Options) (*Controller, error) {
	c := &Controller{
		client:         client,
		clusters:       clusters.Lister(),
		secrets:        secrets.Lister(),
		clustersSynced: clusters.Informer().HasSynced,
		secretsSynced:  secrets.Informer().HasSynced,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: Name}),
		recorder: recorder,
		opts:     opts,
		trackers: map[string]*clusterhealth.Tracker{},
		refusals: map[string]string{},
	}
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueue,
		UpdateFunc: func(old, obj any) {
			// Our own status writes come back as updates: only a changed
			// spec (say a new address or secret) needs a probe now.
			o, n := old.(*federationv1beta1.Cluster), obj.(*federationv1beta1.Cluster)
			if !equality.Semantic.DeepEqual(o.Spec, n.Spec) {
				c.enqueue(obj)
			}
		},
		DeleteFunc: c.forget,
	}); err != nil {
		return nil, err
	}
	if _, err := secrets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueClustersOfSecret,
		UpdateFunc: func(_, obj any) { c.enqueueClustersOfSecret(obj) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) forget(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	c.mu.Lock()
	delete(c.trackers, key)
	delete(c.refusals, key)
	c.mu.Unlock()
	clusterMetrics.forget(key)
}

// enqueueClustersOfSecret probes at once the clusters whose credentials changed.
func (c *Controller) enqueueClustersOfSecret(obj any) {
	secret, ok := obj.(*corev1.Secret)
	if !ok {
		return
	}
	clusters, err := c.clusters.List(labels.Everything())
	if err != nil {
		return
	}
	for _, cl := range clusters {
		if cl.Spec.SecretRef != nil && cl.Spec.SecretRef.Name == secret.Name {
			c.enqueue(cl)
		}
	}
}

// Run probes until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting controller", "controller", Name, "period", c.opts.Period, "timeout", c.opts.Timeout)
	if !cache.WaitForNamedCacheSync(Name, ctx.Done(), c.clustersSynced, c.secretsSynced) {
		return fmt.Errorf("%s controller: caches did not sync", Name)
	}
	queueworker.RunWorkers(ctx, c.opts.Workers, c.queue, c.worker)
	logger.Info("Stopped controller", "controller", Name)
	return nil
}

func (c *Controller) worker(ctx context.Context) {
	queueworker.Run(ctx, c.queue, queueworker.Handlers[string]{
		Sync: c.sync, What: "Syncing cluster health", KeyName: "cluster",
		// Level-based polling: every cluster comes back after a period.
		Succeeded: func(key string) { c.queue.AddAfter(key, c.opts.Period) },
	})
}

// sync probes one cluster and writes its status when it changed.
func (c *Controller) sync(ctx context.Context, name string) error {
	cluster, err := c.clusters.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	obs := c.observe(ctx, cluster)
	c.recordRefusal(ctx, cluster, obs)
	c.mu.Lock()
	tracker, ok := c.trackers[name]
	if !ok {
		tracker = &clusterhealth.Tracker{Thresholds: c.opts.Thresholds}
		c.trackers[name] = tracker
	}
	previous := tracker.Verdict()
	verdict, changed := tracker.Observe(obs)
	c.mu.Unlock()
	clusterMetrics.record(name, obs, verdict)

	if changed {
		c.recordTransition(ctx, cluster, previous, verdict, obs)
	}
	status, write := desiredStatus(cluster.Status, verdict, obs, time.Now())
	if !write {
		return nil
	}
	updated := cluster.DeepCopy()
	updated.Status = status
	_, err = c.client.FederationV1beta1().Clusters().UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("updating status of cluster %s: %w", name, err)
	}
	return nil
}

// observe probes the cluster, or explains why it cannot.
func (c *Controller) observe(ctx context.Context, cluster *federationv1beta1.Cluster) clusterhealth.Observation {
	start := time.Now()
	defer func() {
		clusterMetrics.probeDuration.WithLabelValues(cluster.Name).Observe(time.Since(start).Seconds())
	}()
	if federationv1beta1.IsAgent(cluster) {
		return c.observeAgent(ctx, cluster)
	}
	if cluster.Spec.SecretRef == nil || cluster.Spec.SecretRef.Name == "" {
		return clusterhealth.Observation{Reachable: true, Message: "spec.secretRef names no credentials Secret"}
	}
	secret, err := c.secrets.Secrets(federationv1beta1.SystemNamespace).Get(cluster.Spec.SecretRef.Name)
	if err != nil {
		return clusterhealth.Observation{Reachable: true, Message: fmt.Sprintf("reading credentials Secret %s/%s: %v", federationv1beta1.SystemNamespace, cluster.Spec.SecretRef.Name, err)}
	}
	cfg, err := membercluster.RESTConfig(cluster, secret)
	if err != nil {
		// Nothing is sent to the member with refused credentials.
		obs := clusterhealth.Observation{Reachable: true, Message: err.Error()}
		if refused := membercluster.Refused(err); refused != nil {
			obs.Reason = refused.Reason
		}
		return obs
	}
	return clusterhealth.Probe(ctx, cfg, c.opts.Timeout)
}

// observeAgent probes an agent member through its tunnel, and says whether
// the tunnel or the member failed when the probe does not get through.
func (c *Controller) observeAgent(ctx context.Context, cluster *federationv1beta1.Cluster) clusterhealth.Observation {
	cfg, err := membercluster.AgentRESTConfig(c.agentsVia, cluster)
	if err != nil {
		return clusterhealth.Observation{Message: err.Error()}
	}
	var failed atomic.Value
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if resp != nil && resp.Header.Get(wire.StatusHeader) != "" {
				failed.Store(resp.Header.Get(wire.StatusHeader))
			}
			return resp, err
		})
	})
	obs := clusterhealth.Probe(ctx, cfg, c.opts.Timeout)
	switch failed.Load() {
	case wire.StatusTunnelDown:
		return clusterhealth.Observation{Reason: ReasonTunnelDown, Message: "the agent holds no tunnel to the federation"}
	case wire.StatusMemberUnreachable:
		return clusterhealth.Observation{Reason: ReasonMemberUnreachable, Message: "the agent's tunnel is open, but the agent cannot reach the member's API server"}
	}
	return obs
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// ReachAgentsThrough sets the controller manager's own configuration for
// the federation apiserver, through which agent members are probed.
func (c *Controller) ReachAgentsThrough(federation *rest.Config) { c.agentsVia = federation }

// recordRefusal records a warning event (reason InvalidCredentials or
// InvalidServerAddress) when a cluster's credentials or address are
// refused, once per refusal: the condition says it at the next verdict, and
// the event tells at once whoever wrote them.
func (c *Controller) recordRefusal(ctx context.Context, cluster *federationv1beta1.Cluster, obs clusterhealth.Observation) {
	c.mu.Lock()
	last := c.refusals[cluster.Name]
	if obs.Reason == "" {
		delete(c.refusals, cluster.Name)
	} else {
		c.refusals[cluster.Name] = obs.Message
	}
	c.mu.Unlock()
	if obs.Reason == "" || obs.Message == last || obs.Reason == ReasonTunnelDown || obs.Reason == ReasonMemberUnreachable {
		return
	}
	c.recorder.Event(cluster, corev1.EventTypeWarning, obs.Reason, obs.Message)
	klog.FromContext(ctx).Info("Refused a cluster's address or credentials", "cluster", klog.KObj(cluster), "reason", obs.Reason, "message", obs.Message)
}

func (c *Controller) recordTransition(ctx context.Context, cluster *federationv1beta1.Cluster, from, to clusterhealth.Verdict, obs clusterhealth.Observation) {
	reason, kind := "Cluster"+string(to), corev1.EventTypeWarning
	if to == clusterhealth.Ready {
		kind = corev1.EventTypeNormal
	}
	msg := fmt.Sprintf("Cluster %s is %s", cluster.Name, to)
	if from != "" {
		msg = fmt.Sprintf("Cluster %s changed from %s to %s", cluster.Name, from, to)
	}
	if obs.Message != "" && to != clusterhealth.Ready {
		msg += ": " + obs.Message
	}
	c.recorder.Event(cluster, kind, reason, msg)
	klog.FromContext(ctx).Info("Cluster health changed", "cluster", klog.KObj(cluster), "from", from, "to", to, "message", obs.Message)
}
