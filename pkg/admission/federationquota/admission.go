// Package federationquota is Kubernetes' ResourceQuota admission plugin
// (k8s.io/apiserver/pkg/admission/plugin/resourcequota) as the federation
// apiserver runs it: for the object counts of the federated types only
// (package federationquota of pkg), whose usage the federation's resource
// quota controller keeps; a create beyond such a limit is refused with the
// usual 403 "exceeded quota". Every other resource of a quota is left to
// the members, which enforce it on their copies.
package federationquota

import (
	"context"
	"io"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	genericadmissioninitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	"k8s.io/apiserver/pkg/admission/plugin/resourcequota/apis/resourcequota/validation"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/federation-v1/federation/pkg/quotaevaluators"
)

// PluginName is Kubernetes' plugin's: --enable-admission-plugins and
// --admission-control-config-file name it the same way.
const PluginName = resourcequota.PluginName

// Register registers the plugin. Its configuration file, if any, is
// Kubernetes' ResourceQuotaConfiguration.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(config io.Reader) (admission.Interface, error) {
		configuration, err := resourcequota.LoadConfiguration(config)
		if err != nil {
			return nil, err
		}
		if configuration != nil {
			if errs := validation.ValidateConfiguration(configuration); len(errs) != 0 {
				return nil, errs.ToAggregate()
			}
		}
		quota, err := resourcequota.NewResourceQuota(configuration, 5)
		if err != nil {
			return nil, err
		}
		return &Plugin{quota: quota, resources: quotaevaluators.Resources()}, nil
	})
}

// Plugin hands Kubernetes' plugin the requests of the counted resources,
// under the resource their quotas count them by.
type Plugin struct {
	quota     *resourcequota.QuotaAdmission
	resources map[schema.GroupResource]schema.GroupVersionResource
}

var (
	_ admission.ValidationInterface                                = &Plugin{}
	_ admission.InitializationValidator                            = &Plugin{}
	_ genericadmissioninitializer.WantsDrainedNotification         = &Plugin{}
	_ genericadmissioninitializer.WantsExternalKubeClientSet       = &Plugin{}
	_ genericadmissioninitializer.WantsExternalKubeInformerFactory = &Plugin{}
)

// Handles creates and updates, as Kubernetes' plugin.
func (p *Plugin) Handles(op admission.Operation) bool { return p.quota.Handles(op) }

// SetDrainedNotification gives Kubernetes' plugin the server's stop channel,
// then the federation's quota configuration (which needs it): the
// generic initializers give the first, not the second.
func (p *Plugin) SetDrainedNotification(stopCh <-chan struct{}) {
	p.quota.SetDrainedNotification(stopCh)
	p.quota.SetQuotaConfiguration(quotaevaluators.Configuration())
}

// SetExternalKubeClientSet is the client that writes the quotas' usage.
func (p *Plugin) SetExternalKubeClientSet(client kubernetes.Interface) {
	p.quota.SetExternalKubeClientSet(client)
}

// SetExternalKubeInformerFactory is where the quotas are read.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	p.quota.SetExternalKubeInformerFactory(f)
}

// ValidateInitialization is Kubernetes' plugin's.
func (p *Plugin) ValidateInitialization() error { return p.quota.ValidateInitialization() }

// Validate charges the request to the quotas of its namespace when it
// creates (or, for a Service, changes) an object of a counted resource.
// Other resources and subresources are not charged: an evaluator made on
// the fly for them would ask for a usage nobody at the federation counts.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if a.GetSubresource() != "" {
		return nil
	}
	gvr, ok := p.resources[a.GetResource().GroupResource()]
	if !ok {
		return nil
	}
	if gvr.GroupResource() != a.GetResource().GroupResource() {
		a = servedAs{Attributes: a, resource: gvr}
	}
	return p.quota.Validate(ctx, a, o)
}

// servedAs is a request for a resource served under another group
// (extensions/v1beta1 deployments) as one for the resource itself.
type servedAs struct {
	admission.Attributes
	resource schema.GroupVersionResource
}

func (s servedAs) GetResource() schema.GroupVersionResource { return s.resource }
