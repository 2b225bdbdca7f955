package federatedtypes

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// podSpec adds what the pod spec at path uses in the member: its
// ServiceAccount (unless the namespace's default one, which every member
// makes in every namespace and pods run as when they name none), Secrets,
// ConfigMaps and claims. Not kube-root-ca.crt (rootCAConfigMap), which
// every member publishes in every namespace (public CA data its own
// service-account volumes use); nor ephemeral volumes' claims, the
// member's own making, though what they clone is named.
func (refs *referenceList) podSpec(copy *unstructured.Unstructured, path []string) error {
	var spec corev1.PodSpec
	if err := decodeAt(copy, &spec, path...); err != nil {
		return err
	}
	p := field.NewPath(path[0], path[1:]...)
	for _, sa := range []struct{ field, name string }{
		{"serviceAccountName", spec.ServiceAccountName},
		{"serviceAccount", spec.DeprecatedServiceAccount},
	} {
		if sa.name != "default" {
			refs.add(serviceAccounts, "ServiceAccount", sa.name, p.Child(sa.field), false)
		}
	}
	for i, v := range spec.Volumes {
		if err := refs.volume(&v.VolumeSource, p.Child("volumes").Index(i)); err != nil {
			return err
		}
	}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		refs.env(c.Env, c.EnvFrom, p.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		refs.env(c.Env, c.EnvFrom, p.Child("containers").Index(i))
	}
	for i := range spec.EphemeralContainers {
		c := &spec.EphemeralContainers[i]
		refs.env(c.Env, c.EnvFrom, p.Child("ephemeralContainers").Index(i))
	}
	for i, s := range spec.ImagePullSecrets {
		refs.add(secrets, "Secret", s.Name, p.Child("imagePullSecrets").Index(i).Child("name"), false)
	}
	// Devices claimed by whoever made the claim, and a PodGroup's
	// scheduling: kinds the federation does not propagate.
	for i, c := range spec.ResourceClaims {
		cp := p.Child("resourceClaims").Index(i)
		if c.ResourceClaimName != nil {
			return notPropagated(cp.Child("resourceClaimName"), "resource.k8s.io/ResourceClaim", *c.ResourceClaimName)
		}
		if c.ResourceClaimTemplateName != nil {
			return notPropagated(cp.Child("resourceClaimTemplateName"), "resource.k8s.io/ResourceClaimTemplate", *c.ResourceClaimTemplateName)
		}
	}
	if g := spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
		return notPropagated(p.Child("schedulingGroup", "podGroupName"), "scheduling.k8s.io/PodGroup", *g.PodGroupName)
	}
	return nil
}

// claimTemplates adds what a StatefulSet's claim templates name: the
// member makes those claims as they are.
func (refs *referenceList) claimTemplates(copy *unstructured.Unstructured) error {
	var spec struct {
		VolumeClaimTemplates []corev1.PersistentVolumeClaim `json:"volumeClaimTemplates"`
	}
	if err := decodeAt(copy, &spec, "spec"); err != nil {
		return err
	}
	for i := range spec.VolumeClaimTemplates {
		if err := refs.claimSpec(&spec.VolumeClaimTemplates[i].Spec, field.NewPath("spec", "volumeClaimTemplates").Index(i).Child("spec")); err != nil {
			return err
		}
	}
	return nil
}

// volume adds what a pod volume at p names.
func (refs *referenceList) volume(v *corev1.VolumeSource, p *field.Path) error {
	secret := func(name string, p *field.Path, optional *bool) {
		refs.add(secrets, "Secret", name, p, optional != nil && *optional)
	}
	configMap := func(name string, p *field.Path, optional *bool) {
		if name != rootCAConfigMap {
			refs.add(configMaps, "ConfigMap", name, p, optional != nil && *optional)
		}
	}
	// Each source is looked at, whatever the member would make of several.
	if v.Secret != nil {
		secret(v.Secret.SecretName, p.Child("secret", "secretName"), v.Secret.Optional)
	}
	if v.ConfigMap != nil {
		configMap(v.ConfigMap.Name, p.Child("configMap", "name"), v.ConfigMap.Optional)
	}
	if v.Projected != nil {
		for i, s := range v.Projected.Sources {
			sp := p.Child("projected", "sources").Index(i)
			if s.Secret != nil {
				secret(s.Secret.Name, sp.Child("secret", "name"), s.Secret.Optional)
			}
			if s.ConfigMap != nil {
				configMap(s.ConfigMap.Name, sp.Child("configMap", "name"), s.ConfigMap.Optional)
			}
		}
	}
	if v.PersistentVolumeClaim != nil {
		refs.add(ClaimsResource, "PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName, p.Child("persistentVolumeClaim", "claimName"), false)
	}
	// The volume plugins' credentials.
	if s := v.CSI; s != nil && s.NodePublishSecretRef != nil {
		secret(s.NodePublishSecretRef.Name, p.Child("csi", "nodePublishSecretRef", "name"), nil)
	}
	if s := v.CephFS; s != nil && s.SecretRef != nil {
		secret(s.SecretRef.Name, p.Child("cephfs", "secretRef", "name"), nil)
	}
	if s := v.RBD; s != nil && s.SecretRef != nil {
		secret(s.SecretRef.Name, p.Child("rbd", "secretRef", "name"), nil)
	}
	if s := v.ISCSI; s != nil && s.SecretRef != nil {
		secret(s.SecretRef.Name, p.Child("iscsi", "secretRef", "name"), nil)
	}
	if s := v.FlexVolume; s != nil && s.SecretRef != nil {
		secret(s.SecretRef.Name, p.Child("flexVolume", "secretRef", "name"), nil)
	}
	if s := v.AzureFile; s != nil {
		secret(s.SecretName, p.Child("azureFile", "secretName"), nil)
	}
	if s := v.ScaleIO; s != nil && s.SecretRef != nil {
		secret(s.SecretRef.Name, p.Child("scaleIO", "secretRef", "name"), nil)
	}
	if s := v.StorageOS; s != nil && s.SecretRef != nil {
		secret(s.SecretRef.Name, p.Child("storageos", "secretRef", "name"), nil)
	}
	if s := v.Cinder; s != nil && s.SecretRef != nil {
		secret(s.SecretRef.Name, p.Child("cinder", "secretRef", "name"), nil)
	}
	if e := v.Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
		return refs.claimSpec(&e.VolumeClaimTemplate.Spec, p.Child("ephemeral", "volumeClaimTemplate", "spec"))
	}
	return nil
}

// env adds the Secrets and ConfigMaps a container at p reads its
// environment from.
func (refs *referenceList) env(env []corev1.EnvVar, envFrom []corev1.EnvFromSource, p *field.Path) {
	for i, e := range env {
		if e.ValueFrom == nil {
			continue
		}
		ep := p.Child("env").Index(i).Child("valueFrom")
		if s := e.ValueFrom.SecretKeyRef; s != nil {
			refs.add(secrets, "Secret", s.Name, ep.Child("secretKeyRef", "name"), s.Optional != nil && *s.Optional)
		}
		if c := e.ValueFrom.ConfigMapKeyRef; c != nil && c.Name != rootCAConfigMap {
			refs.add(configMaps, "ConfigMap", c.Name, ep.Child("configMapKeyRef", "name"), c.Optional != nil && *c.Optional)
		}
	}
	for i, e := range envFrom {
		ep := p.Child("envFrom").Index(i)
		if s := e.SecretRef; s != nil {
			refs.add(secrets, "Secret", s.Name, ep.Child("secretRef", "name"), s.Optional != nil && *s.Optional)
		}
		if c := e.ConfigMapRef; c != nil && c.Name != rootCAConfigMap {
			refs.add(configMaps, "ConfigMap", c.Name, ep.Child("configMapRef", "name"), c.Optional != nil && *c.Optional)
		}
	}
}
