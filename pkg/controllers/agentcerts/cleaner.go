package agentcerts

import (
	"context"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
)

// As kube-controller-manager's csrcleaner does, for the agents' and
// bootstrap tokens' requests only: a decided request is deleted an hour
// after its decision (the agent has its certificate, or its answer), a
// pending one after a day. With the apiserver's bound on what one agent
// may store, that bounds what agents keep in the federation's etcd.
const (
	cleanPeriod = 10 * time.Minute
	keepDecided = time.Hour
	keepPending = 24 * time.Hour
)

// clean deletes the agents' requests that have been kept long enough.
func (c *Controller) clean(ctx context.Context) {
	csrs, err := c.csrs.List(labels.Everything())
	if err != nil {
		return
	}
	now := c.now()
	for _, csr := range csrs {
		if agentOf, tokenID := requester(csr); agentOf == "" && tokenID == "" {
			continue
		}
		if !expired(csr, now) {
			continue
		}
		err := c.client.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &csr.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			klog.FromContext(ctx).Error(err, "Deleting an agent's old certificate request", "csr", csr.Name)
		}
	}
}

// expired: decided more than keepDecided ago, or pending for keepPending.
func expired(csr *certificatesv1.CertificateSigningRequest, now time.Time) bool {
	if Pending(csr) {
		return now.Sub(csr.CreationTimestamp.Time) > keepPending
	}
	var decided time.Time
	for _, cond := range csr.Status.Conditions {
		if t := cond.LastUpdateTime.Time; t.After(decided) {
			decided = t
		}
	}
	if decided.IsZero() {
		decided = csr.CreationTimestamp.Time
	}
	return now.Sub(decided) > keepDecided
}
