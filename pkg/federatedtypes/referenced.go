package federatedtypes

import "k8s.io/apimachinery/pkg/runtime/schema"

// ReferencedResources are the resources a type's copies may name
// (References): when a member's copy of one of them goes, the copies
// that name it are looked at again.
func ReferencedResources(t *Type) []schema.GroupVersionResource {
	if _, pods := podSpecPaths[t.Kind]; pods {
		return []schema.GroupVersionResource{serviceAccounts, secrets, configMaps, ClaimsResource}
	}
	switch t.Kind {
	case "Secret":
		return []schema.GroupVersionResource{serviceAccounts}
	case "HorizontalPodAutoscaler":
		return []schema.GroupVersionResource{hpaTargets["Deployment"], hpaTargets["ReplicaSet"], hpaTargets["StatefulSet"]}
	case "RoleBinding":
		return []schema.GroupVersionResource{roles}
	case "PersistentVolumeClaim":
		return []schema.GroupVersionResource{ClaimsResource}
	case "Ingress":
		return []schema.GroupVersionResource{secrets, services}
	case "Service":
		return []schema.GroupVersionResource{services}
	}
	return nil
}
