package clusterhealth

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// withCodecs gives an unversioned REST client the serializers it insists on,
// although /readyz answers plain text.
func withCodecs(config *rest.Config) *rest.Config {
	config.NegotiatedSerializer = serializer.NewCodecFactory(runtime.NewScheme()).WithoutConversion()
	return config
}
