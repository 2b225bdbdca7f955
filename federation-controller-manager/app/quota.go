package app

import (
	"context"

	"github.com/federation-v1/federation/pkg/controllers/federationquota"
)

// quotaWorkers is how many quotas are recounted at once (Kubernetes'
// --concurrent-resource-quota-syncs default).
const quotaWorkers = 5

// startQuotaUsage runs the resource quota controller for the federation's
// object counts, from the dynamic informers the propagation controllers
// share (the quotas themselves from the typed quota informer), recounting every quota every resync (Kubernetes'
// --resource-quota-sync-period default).
func startQuotaUsage(ctx context.Context, cc *ControllerContext) (func(context.Context) error, error) {
	c, err := federationquota.New(ctx, cc.KubeClient.CoreV1(), cc.KubeInformers.Core().V1().ResourceQuotas(),
		cc.DynamicInformers, resync, quotaWorkers)
	if err != nil {
		return nil, err
	}
	return c.Run, nil
}
