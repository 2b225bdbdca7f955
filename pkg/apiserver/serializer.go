package apiserver

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// withoutProtobuf offers every serialization of a NegotiatedSerializer
// except protobuf. The federation types have no protobuf encoding: offered,
// protobuf would be chosen for clients that prefer it (with a JSON
// fallback) and then fail with 406; not offered, those clients get JSON,
// as they do from custom resources.
type withoutProtobuf struct {
	runtime.NegotiatedSerializer
}

// SupportedMediaTypes returns the media types other than protobuf.
func (s withoutProtobuf) SupportedMediaTypes() []runtime.SerializerInfo {
	var infos []runtime.SerializerInfo
	for _, info := range s.NegotiatedSerializer.SupportedMediaTypes() {
		if info.MediaType != runtime.ContentTypeProtobuf {
			infos = append(infos, info)
		}
	}
	return infos
}
