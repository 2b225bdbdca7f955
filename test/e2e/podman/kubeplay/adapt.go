// Package kubeplay runs a control plane's Kubernetes objects, as helm
// renders them or a host cluster holds them, with `podman kube play` 4.3.1
// (Debian's), which plays Pods, Deployments, PersistentVolumeClaims,
// ConfigMaps and Secrets only, and several of those only in part. Adapt
// turns the objects into what it runs the same way a cluster would; Player
// plays them and removes everything a run made.
package kubeplay

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Options say how to adapt.
type Options struct {
	// Prefix starts the name of every pod, ConfigMap and volume podman
	// makes, so that one run's leftovers never collide with another's and
	// Player.Remove finds them all.
	Prefix string
	// HostIP stands for status.podIP and status.hostIP in the downward API:
	// host-network pods have the host's addresses. Default 127.0.0.1.
	HostIP string
	// ServiceAccounts, when set, gives every pod whose
	// automountServiceAccountToken is not false what a kubelet gives it:
	// its service account's token, the cluster's CA and its namespace in
	// /var/run/secrets/kubernetes.io/serviceaccount, and the API server's
	// address in KUBERNETES_SERVICE_HOST and _PORT, so that client-go's
	// in-cluster configuration works. Unset, pods get none of it.
	ServiceAccounts *ServiceAccounts
}

// ServiceAccounts are what a pod's in-cluster configuration needs.
type ServiceAccounts struct {
	// Token returns a token of the service account name in namespace (a
	// TokenRequest at the cluster).
	Token func(namespace, name string) ([]byte, error)
	// CA is the cluster's CA in PEM (its kube-root-ca.crt ConfigMap's).
	CA []byte
	// Host and Port reach the cluster's API server from the host.
	Host string
	Port int
}

// ServiceAccountDir is where a kubelet mounts a pod's service account
// token, CA and namespace.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Plan is what podman plays: ConfigMaps, PVCs and Pods, in that order.
type Plan struct {
	Prefix  string
	Objects []runtime.Object
	// Pods are the podman pods' names, each the prefix and the name the
	// pod has in a cluster (a Deployment's NAME-i, a StatefulSet's NAME-i).
	Pods []string
	// Skipped are the objects podman does not play (kind/name), such as
	// Services and RBAC: with host networking and no cluster they have
	// nothing to do.
	Skipped []string
}

// YAML is the plan as one multi-document file for podman kube play.
func (p *Plan) YAML() ([]byte, error) {
	var out bytes.Buffer
	for _, obj := range p.Objects {
		doc, err := yaml.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("writing %T as YAML: %w", obj, err)
		}
		out.WriteString("---\n")
		out.Write(doc)
	}
	return out.Bytes(), nil
}

// Adapt turns the objects into a plan. Every workload must use the host's
// network (the only network podman has on these machines, rootful without
// CNI plugins); an object or field that podman would run differently from
// a cluster is an error naming it.
func Adapt(objs []runtime.Object, opts Options) (*Plan, error) {
	if opts.Prefix == "" {
		return nil, fmt.Errorf("kubeplay: Options.Prefix is empty")
	}
	if opts.HostIP == "" {
		opts.HostIP = "127.0.0.1"
	}
	a := &adapter{opts: opts, plan: &Plan{Prefix: opts.Prefix}, configMaps: map[string]string{}}
	var pods []runtime.Object
	for _, obj := range objs {
		made, err := a.adapt(obj)
		if err != nil {
			return nil, err
		}
		for _, m := range made {
			if _, ok := m.(*corev1.Pod); ok {
				pods = append(pods, m)
			} else {
				a.plan.Objects = append(a.plan.Objects, m)
			}
		}
	}
	// podman reads a pod's ConfigMaps and claims from the documents before it.
	a.plan.Objects = append(a.plan.Objects, pods...)
	return a.plan, nil
}

type adapter struct {
	opts Options
	plan *Plan
	// configMaps maps each podman ConfigMap made to the kind/name it came
	// from, so that a Secret and a ConfigMap of the same name are caught.
	configMaps map[string]string
}

func (a *adapter) adapt(obj runtime.Object) ([]runtime.Object, error) {
	switch o := obj.(type) {
	case *corev1.Secret:
		// podman 4.3.1 writes a Secret volume's files as the base64 text of
		// the Secret's data, not the bytes (and panics on a secret volume
		// without "optional"); its ConfigMap volumes decode binaryData. So
		// each Secret travels as a ConfigMap with the same bytes.
		data := map[string][]byte{}
		for k, v := range o.Data {
			data[k] = v
		}
		for k, v := range o.StringData {
			data[k] = []byte(v)
		}
		return a.configMap("Secret/"+o.Name, o.Name, nil, data)
	case *corev1.ConfigMap:
		return a.configMap("ConfigMap/"+o.Name, o.Name, o.Data, o.BinaryData)
	case *corev1.PersistentVolumeClaim:
		return []runtime.Object{a.claim(o.Name, o.Spec)}, nil
	case *corev1.Pod:
		pod, err := a.pod(o.Name, o.Namespace, o.ObjectMeta, o.Spec)
		return []runtime.Object{pod}, err
	case *appsv1.Deployment:
		return a.replicas("Deployment/"+o.Name, o.Name, o.Namespace, o.Spec.Replicas, o.Spec.Template, nil)
	case *appsv1.StatefulSet:
		return a.replicas("StatefulSet/"+o.Name, o.Name, o.Namespace, o.Spec.Replicas, o.Spec.Template, o.Spec.VolumeClaimTemplates)
	default:
		kind := obj.GetObjectKind().GroupVersionKind().Kind
		name := ""
		if m, ok := obj.(metav1.Object); ok {
			name = m.GetName()
		}
		a.plan.Skipped = append(a.plan.Skipped, kind+"/"+name)
		return nil, nil
	}
}

func (a *adapter) configMap(from, name string, data map[string]string, binary map[string][]byte) ([]runtime.Object, error) {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: a.opts.Prefix + name},
		Data:       data,
		BinaryData: binary,
	}
	if other, ok := a.configMaps[cm.Name]; ok {
		return nil, fmt.Errorf("%s and %s would both be podman's ConfigMap %s", other, from, cm.Name)
	}
	a.configMaps[cm.Name] = from
	return []runtime.Object{cm}, nil
}

func (a *adapter) claim(name string, spec corev1.PersistentVolumeClaimSpec) *corev1.PersistentVolumeClaim {
	// podman makes a named volume of the claim: size and class mean nothing.
	return &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: a.opts.Prefix + name},
		Spec:       corev1.PersistentVolumeClaimSpec{AccessModes: spec.AccessModes, Resources: spec.Resources},
	}
}

// replicas makes the pods a Deployment or StatefulSet would: NAME-i, and
// for a StatefulSet the claims of its volumeClaimTemplates, TEMPLATE-NAME-i.
// (podman would play a Deployment as one pod, and no StatefulSet at all.)
func (a *adapter) replicas(from, name, namespace string, replicas *int32, template corev1.PodTemplateSpec, claims []corev1.PersistentVolumeClaim) ([]runtime.Object, error) {
	n := 1
	if replicas != nil {
		n = int(*replicas)
	}
	var made []runtime.Object
	for i := range n {
		podName := name + "-" + strconv.Itoa(i)
		spec := *template.Spec.DeepCopy()
		for _, c := range claims {
			claim := c.Name + "-" + podName
			made = append(made, a.claim(claim, c.Spec))
			spec.Volumes = append(spec.Volumes, corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
			}})
		}
		pod, err := a.pod(podName, namespace, template.ObjectMeta, spec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
		made = append(made, pod)
	}
	return made, nil
}

func (a *adapter) pod(name, namespace string, meta metav1.ObjectMeta, spec corev1.PodSpec) (*corev1.Pod, error) {
	if !spec.HostNetwork {
		return nil, fmt.Errorf("pod %s: spec.hostNetwork is false; podman here has only the host's network", name)
	}
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: a.opts.Prefix + name, Labels: meta.Labels},
		Spec:       *spec.DeepCopy(),
	}
	for k, v := range meta.Annotations {
		// podman 4.3.1 refuses annotation values over 63 characters (a
		// label's limit); such as a config checksum, only rollouts read them.
		if len(v) <= 63 {
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[k] = v
		}
	}
	s := &pod.Spec
	for i := range s.Volumes {
		if err := a.volume(&s.Volumes[i]); err != nil {
			return nil, fmt.Errorf("pod %s: %w", name, err)
		}
	}
	if err := a.serviceAccount(s, name, namespace); err != nil {
		return nil, fmt.Errorf("pod %s: %w", name, err)
	}
	for _, list := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range list {
			if err := a.container(&list[i], name, namespace); err != nil {
				return nil, fmt.Errorf("pod %s: container %s: %w", name, list[i].Name, err)
			}
		}
	}
	// podman cannot pull with Kubernetes pull secrets; the image is local.
	s.ImagePullSecrets = nil
	a.plan.Pods = append(a.plan.Pods, pod.Name)
	return pod, nil
}

// serviceAccount gives the pod its service account's token, as a kubelet
// does, when Options.ServiceAccounts is set and the pod does not opt out.
// The files travel as a ConfigMap of the pod's own, as Secrets do.
func (a *adapter) serviceAccount(s *corev1.PodSpec, podName, namespace string) error {
	sa := a.opts.ServiceAccounts
	if sa == nil || (s.AutomountServiceAccountToken != nil && !*s.AutomountServiceAccountToken) {
		return nil
	}
	account := s.ServiceAccountName
	if account == "" {
		account = "default"
	}
	if namespace == "" {
		namespace = "default"
	}
	token, err := sa.Token(namespace, account)
	if err != nil {
		return fmt.Errorf("the token of service account %s/%s: %w", namespace, account, err)
	}
	const volume = "kube-api-access"
	for _, v := range s.Volumes {
		if v.Name == volume {
			return fmt.Errorf("volume %s: the name of the service account's volume", volume)
		}
	}
	made, err := a.configMap("ServiceAccountToken/"+podName, volume+"-"+podName, nil, map[string][]byte{
		corev1.ServiceAccountTokenKey: token, corev1.ServiceAccountRootCAKey: sa.CA, corev1.ServiceAccountNamespaceKey: []byte(namespace),
	})
	if err != nil {
		return err
	}
	// Before the pods, as Adapt puts them.
	a.plan.Objects = append(a.plan.Objects, made...)
	s.Volumes = append(s.Volumes, corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: a.opts.Prefix + volume + "-" + podName}},
	}})
	for _, list := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range list {
			c := &list[i]
			mounted := false
			for _, m := range c.VolumeMounts {
				mounted = mounted || m.MountPath == ServiceAccountDir
			}
			// A kubelet leaves a container that mounts something there as it is.
			if !mounted {
				c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: volume, MountPath: ServiceAccountDir, ReadOnly: true})
			}
			c.Env = append(c.Env,
				corev1.EnvVar{Name: "KUBERNETES_SERVICE_HOST", Value: sa.Host},
				corev1.EnvVar{Name: "KUBERNETES_SERVICE_PORT", Value: strconv.Itoa(sa.Port)})
		}
	}
	return nil
}

func (a *adapter) volume(v *corev1.Volume) error {
	switch {
	case v.Secret != nil:
		items, err := flatItems(v.Name, v.Secret.Items)
		if err != nil {
			return err
		}
		v.VolumeSource = corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: a.opts.Prefix + v.Secret.SecretName},
			Items:                items, Optional: v.Secret.Optional,
		}}
	case v.ConfigMap != nil:
		if _, err := flatItems(v.Name, v.ConfigMap.Items); err != nil {
			return err
		}
		v.ConfigMap.Name = a.opts.Prefix + v.ConfigMap.Name
	case v.PersistentVolumeClaim != nil:
		v.PersistentVolumeClaim.ClaimName = a.opts.Prefix + v.PersistentVolumeClaim.ClaimName
	case v.EmptyDir != nil:
	default:
		return fmt.Errorf("volume %s: only secret, configMap, persistentVolumeClaim and emptyDir volumes are adapted", v.Name)
	}
	return nil
}

// flatItems checks a volume's items: podman writes each to the top of the
// one volume it makes per ConfigMap (shared by every pod that mounts it,
// so an item adds a file rather than selecting one) and cannot make
// subfolders.
func flatItems(volume string, items []corev1.KeyToPath) ([]corev1.KeyToPath, error) {
	for _, it := range items {
		if strings.Contains(it.Path, "/") {
			return nil, fmt.Errorf("volume %s: item %s has path %q; podman cannot make its folder", volume, it.Key, it.Path)
		}
	}
	return items, nil
}

func (a *adapter) container(c *corev1.Container, podName, namespace string) error {
	// podman turns every containerPort into a host port mapping, which it
	// refuses on the host's network; the ports are open anyway.
	c.Ports = nil
	// podman runs probes as healthchecks on systemd timers (there is no
	// systemd here), and an httpGet probe with curl inside the container
	// (there is no curl in a scratch image). The test checks the same
	// endpoints from outside.
	c.LivenessProbe, c.ReadinessProbe, c.StartupProbe = nil, nil, nil
	for i := range c.Env {
		e := &c.Env[i]
		if e.ValueFrom == nil {
			continue
		}
		value, err := a.downward(e, podName, namespace)
		if err != nil {
			return err
		}
		e.Value, e.ValueFrom = value, nil
	}
	for i := range c.EnvFrom {
		switch from := &c.EnvFrom[i]; {
		case from.ConfigMapRef != nil:
			from.ConfigMapRef.Name = a.opts.Prefix + from.ConfigMapRef.Name
		case from.SecretRef != nil:
			return fmt.Errorf("envFrom secretRef %s: not adapted", from.SecretRef.Name)
		}
	}
	return nil
}

// downward resolves the downward API to literal values: the pod is named
// differently in podman (the prefix), and podman knows no pod IP on the
// host's network.
func (a *adapter) downward(e *corev1.EnvVar, podName, namespace string) (string, error) {
	if f := e.ValueFrom.FieldRef; f != nil {
		switch f.FieldPath {
		case "metadata.name":
			return podName, nil
		case "metadata.namespace":
			return namespace, nil
		case "status.podIP", "status.hostIP":
			return a.opts.HostIP, nil
		}
		return "", fmt.Errorf("env %s: fieldRef %s is not adapted", e.Name, f.FieldPath)
	}
	return "", fmt.Errorf("env %s: only fieldRef values are adapted", e.Name)
}
