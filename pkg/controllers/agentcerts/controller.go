// Package agentcerts gives federation agents their client certificates:
// it approves (or denies) the CertificateSigningRequests of agents and of
// their bootstrap tokens by the rules of Judge, deletes a bootstrap token
// once it got its agent a certificate, and signs approved agents'
// requests with the agents CA, which the federation apiserver trusts for
// agents only (--agent-client-ca-file). An agent renews its certificate
// with a request of its own, approved as long as it asks for its own
// cluster's identity.
package agentcerts

import (
	"context"
	"errors"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	certificatesinformers "k8s.io/client-go/informers/certificates/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	certificateslisters "k8s.io/client-go/listers/certificates/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	"k8s.io/klog/v2"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/generated/clientset/versioned"
	"github.com/federation-v1/federation/pkg/queueworker"
)

// Name is the controller's name in --controllers.
const Name = "agent-certificates"

// Controller approves and signs agents' certificate requests.
type Controller struct {
	client kubernetes.Interface
	// fed binds certificates to their Clusters (bind).
	fed     versioned.Interface
	signer  *Signer
	csrs    certificateslisters.CertificateSigningRequestLister
	secrets corelisters.SecretNamespaceLister
	synced  []cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
	now     func() time.Time
}

// New returns the controller: csrs watches every CertificateSigningRequest,
// secrets the Secrets of federation-system (the bootstrap tokens).
func New(client kubernetes.Interface, fed versioned.Interface, csrs certificatesinformers.CertificateSigningRequestInformer, secrets coreinformers.SecretInformer, signer *Signer) (*Controller, error) {
	c := &Controller{
		client:  client,
		fed:     fed,
		signer:  signer,
		csrs:    csrs.Lister(),
		secrets: secrets.Lister().Secrets(federationv1beta1.SystemNamespace),
		synced:  []cache.InformerSynced{csrs.Informer().HasSynced, secrets.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: Name}),
		now: time.Now,
	}
	enqueue := func(obj any) {
		if csr, ok := obj.(*certificatesv1.CertificateSigningRequest); ok && csr.Spec.SignerName == SignerName {
			c.queue.Add(csr.Name)
		}
	}
	if _, err := csrs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return nil, err
	}
	// A request that waits for its token (one created just before it)
	// is decided again when the token changes.
	if _, err := secrets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueWaiting,
		UpdateFunc: func(_, obj any) { c.enqueueWaiting(obj) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// enqueueWaiting queues the pending requests of a bootstrap token's cluster.
func (c *Controller) enqueueWaiting(obj any) {
	secret, ok := obj.(*corev1.Secret)
	if !ok || secret.Labels[federationv1beta1.AgentClusterLabel] == "" {
		return
	}
	csrs, err := c.csrs.List(labels.Everything())
	if err != nil {
		return
	}
	for _, csr := range csrs {
		if csr.Spec.SignerName == SignerName && Pending(csr) {
			c.queue.Add(csr.Name)
		}
	}
}

// Run approves and signs until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	klog.FromContext(ctx).Info("Starting controller", "controller", Name)
	if !cache.WaitForNamedCacheSync(Name, ctx.Done(), c.synced...) {
		return fmt.Errorf("%s controller: caches did not sync", Name)
	}
	go wait.UntilWithContext(ctx, c.clean, cleanPeriod)
	queueworker.RunWorkers(ctx, 2, c.queue, func(ctx context.Context) {
		queueworker.Run(ctx, c.queue, queueworker.Handlers[string]{Sync: c.sync, What: "Deciding an agent's certificate request", KeyName: "csr"})
	})
	return nil
}

// sync decides a pending request, then signs it once approved.
func (c *Controller) sync(ctx context.Context, name string) error {
	csr, err := c.csrs.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if Pending(csr) {
		return c.decide(ctx, csr)
	}
	if !Condition(csr, certificatesv1.CertificateApproved) || Condition(csr, certificatesv1.CertificateDenied) {
		return nil
	}
	// The token that got an approved request is used, whoever approved it
	// (this controller, kubefed accept, an admin), should its deletion
	// have failed.
	if _, tokenID := requester(csr); tokenID != "" {
		if err := c.deleteUsedToken(ctx, tokenID); err != nil {
			return err
		}
	}
	if !Condition(csr, certificatesv1.CertificateFailed) && len(csr.Status.Certificate) == 0 {
		return c.sign(ctx, csr)
	}
	return nil
}

// deleteUsedToken deletes the bootstrap token tokenID if it is still
// there (in the cache).
func (c *Controller) deleteUsedToken(ctx context.Context, tokenID string) error {
	name := bootstraputil.BootstrapTokenSecretName(tokenID)
	if _, err := c.secrets.Get(name); apierrors.IsNotFound(err) {
		return nil
	}
	return DeleteToken(ctx, c.client, name)
}

// decide approves or denies a pending request as Judge says. Decisions
// are written with the request's resourceVersion, so that one made on a
// stale copy (say, of a request kubefed accept approved meanwhile) fails
// with a conflict and is made again.
func (c *Controller) decide(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	logger := klog.FromContext(ctx)
	v := Judge(csr, c.token(ctx), c.now())
	if v.Action == Approve && v.Reason == ReasonAgentRenewal {
		ok, why, err := renewsBoundCertificate(ctx, c.fed, csr, v.Cluster)
		if err != nil {
			return err
		}
		if !ok {
			v = Verdict{Action: Deny, Cluster: v.Cluster, Reason: "NotThisClustersAgent", Message: why}
		}
	}
	switch v.Action {
	case Ignore:
		return nil
	case Wait:
		logger.Info("Agent certificate request waits for the admin", "csr", csr.Name, "cluster", v.Cluster, "reason", v.Message)
		return nil
	}
	condition := certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: v.Reason, Message: v.Message, LastUpdateTime: metav1.NewTime(c.now()),
	}
	if v.Action == Deny {
		condition.Type = certificatesv1.CertificateDenied
	}
	updated := csr.DeepCopy()
	updated.Status.Conditions = append(updated.Status.Conditions, condition)
	updated, err := c.client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, updated, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("%s certificate request %s of cluster %q: %w", v.Action, csr.Name, v.Cluster, err)
	}
	logger.Info("Agent certificate request decided", "csr", csr.Name, "cluster", v.Cluster, "action", v.Action, "reason", v.Message)
	if v.Action != Approve {
		return nil
	}
	if v.TokenSecret != "" {
		if err := DeleteToken(ctx, c.client, v.TokenSecret); err != nil {
			return err
		}
	}
	return c.sign(ctx, updated)
}

// token reads a bootstrap token Secret from the cache, else from the
// federation (one created a moment ago may not be in the cache yet).
func (c *Controller) token(ctx context.Context) TokenLookup {
	return func(name string) (*corev1.Secret, error) {
		s, err := c.secrets.Get(name)
		if apierrors.IsNotFound(err) {
			return c.client.CoreV1().Secrets(federationv1beta1.SystemNamespace).Get(ctx, name, metav1.GetOptions{})
		}
		return s, err
	}
}

// DeleteToken deletes a bootstrap token Secret that got its agent a
// certificate: a token is good for one.
func DeleteToken(ctx context.Context, client kubernetes.Interface, name string) error {
	err := client.CoreV1().Secrets(federationv1beta1.SystemNamespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the used bootstrap token %s/%s: %w", federationv1beta1.SystemNamespace, name, err)
	}
	return nil
}

// sign writes the certificate of an approved request, if it is an
// agent's (Signable); an approved request with an agent's common name
// that is not is marked Failed, saying why. Other requests of the signer
// are not the agents CA's to sign.
func (c *Controller) sign(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	logger := klog.FromContext(ctx)
	cluster, err := Signable(csr)
	if err != nil {
		if !asksForAgent(csr) {
			return nil
		}
		return c.fail(ctx, csr, "NotAnAgentCertificate", "the agents CA does not sign it: "+err.Error())
	}
	cert, err := c.signer.Sign(csr)
	if err != nil {
		return fmt.Errorf("signing certificate request %s of cluster %q: %w", csr.Name, cluster, err)
	}
	var renewing string
	if serials := csr.Spec.Extra[federationv1beta1.AgentSerialExtra]; len(serials) == 1 {
		renewing = serials[0]
	}
	if err := bind(ctx, c.fed, cluster, cert, renewing); errors.Is(err, errNotBindable) {
		return c.fail(ctx, csr, "ClusterNotAgent", err.Error())
	} else if err != nil {
		return fmt.Errorf("binding the certificate of request %s to cluster %q: %w", csr.Name, cluster, err)
	}
	updated := csr.DeepCopy()
	updated.Status.Certificate = cert
	if _, err := c.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("writing the certificate of request %s of cluster %q: %w", csr.Name, cluster, err)
	}
	logger.Info("Signed an agent's certificate", "csr", csr.Name, "cluster", cluster, "user", federationv1beta1.AgentUser(cluster))
	return nil
}

// fail marks an approved request Failed, saying why it is not signed.
func (c *Controller) fail(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, reason, message string) error {
	updated := csr.DeepCopy()
	updated.Status.Conditions = append(updated.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: reason,
		Message: message, LastUpdateTime: metav1.NewTime(c.now()),
	})
	if _, err := c.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("marking certificate request %s failed: %w", csr.Name, err)
	}
	klog.FromContext(ctx).Info("Refused to sign an approved certificate request", "csr", csr.Name, "reason", message)
	return nil
}
