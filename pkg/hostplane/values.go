// Package hostplane runs a federation control plane in a host cluster, as
// Federation v1's `kubefed init --host-cluster-context` did: the embedded
// Helm chart (deploy/charts/federation) rendered with credentials kubefed
// issues itself, applied server-side through the host's dynamic client, and
// deleted again by its instance label.
package hostplane

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Options are what `kubefed init --host-cluster-context` says about the
// control plane; Values turns them into the chart's values.
type Options struct {
	// Name is the federation's: the release name, the chart's fullname and
	// the controller manager's --federation-name.
	Name string
	// Namespace holds every object (--federation-system-namespace).
	Namespace string
	// Image is REPOSITORY:TAG of the image of every pod.
	Image string
	// ServiceType of the apiserver's and federation-dns' Services:
	// LoadBalancer or NodePort, so that members and kubectl reach them.
	ServiceType corev1.ServiceType
	// AdvertiseAddress, with NodePort, is the address kubectl and members
	// use (default: a node's address).
	AdvertiseAddress string
	// ServicePort is the apiserver Service's port.
	ServicePort int
	// EtcdPersistence keeps etcd's data on a PVC (else an emptyDir), of
	// EtcdCapacity in EtcdStorageClass ("" = the default class).
	EtcdPersistence  bool
	EtcdCapacity     string
	EtcdStorageClass string
	// EtcdServers are an external etcd's URLs: no etcd StatefulSet.
	EtcdServers []string
	// APIServerArgs and ControllerManagerArgs are appended to the
	// components' command lines (v1's --*-arg-overrides).
	APIServerArgs, ControllerManagerArgs []string
	// DNSZone, when set, runs federation-dns for it.
	DNSZone string
	// File are values from --values; the options' own values win over them.
	File map[string]any
}

// Validate checks what the chart cannot, naming the kubefed flag at fault.
func (o *Options) Validate() error {
	switch o.ServiceType {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
	default:
		return fmt.Errorf("--api-server-service-type %q: want LoadBalancer or NodePort", o.ServiceType)
	}
	if o.ServicePort < 1 || o.ServicePort > 65535 {
		return fmt.Errorf("--api-server-port %d: want 1-65535", o.ServicePort)
	}
	if o.EtcdPersistence && len(o.EtcdServers) == 0 {
		if _, err := resource.ParseQuantity(o.EtcdCapacity); err != nil {
			return fmt.Errorf("--etcd-pv-capacity %q: %w", o.EtcdCapacity, err)
		}
	}
	if _, _, err := splitImage(o.Image); err != nil {
		return err
	}
	return nil
}

// ParseArgOverrides reads v1's "--flag1=value1,--flag2=value2" into the
// chart's extraArgs; flag names the kubefed flag in errors.
func ParseArgOverrides(flag, overrides string) ([]string, error) {
	if strings.TrimSpace(overrides) == "" {
		return nil, nil
	}
	var args []string
	for _, a := range strings.Split(overrides, ",") {
		a = strings.TrimSpace(a)
		name, _, _ := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") || len(name) < 3 {
			return nil, fmt.Errorf("%s: %q is not --flag=value (want \"--flag1=value1,--flag2=value2\")", flag, a)
		}
		args = append(args, a)
	}
	return args, nil
}

// splitImage splits --image's REPOSITORY[:TAG]; the chart joins them again.
func splitImage(image string) (repository, tag string, err error) {
	return SplitImage("--image", image)
}

// SplitImage splits REPOSITORY[:TAG], the value of the kubefed flag named
// flag, into a chart's image.repository and image.tag.
func SplitImage(flag, image string) (repository, tag string, err error) {
	if image == "" || strings.Contains(image, "@") || strings.ContainsAny(image, " \t") {
		return "", "", fmt.Errorf("%s %q: want REPOSITORY[:TAG], e.g. localhost/federation:v0.5.0", flag, image)
	}
	slash := strings.LastIndex(image, "/")
	if colon := strings.LastIndex(image, ":"); colon > slash {
		return image[:colon], image[colon+1:], nil
	}
	return image, "", nil
}

// Addresses are where the Services answer outside the host cluster, known
// once they are created.
type Addresses struct {
	// APIServer is HOST:PORT of the apiserver for kubectl and members.
	APIServer string
	// DNS is HOST:PORT of federation-dns for members' cluster DNS.
	DNS string
}

// CredentialsSecret names the Secret of the credentials kubefed issues.
func (o *Options) CredentialsSecret() string { return o.Name + "-credentials" }

// Values are the chart's values: the file's, under the options' own. With
// addresses (after the Services have them) the external addresses are in.
func (o *Options) Values(addrs Addresses) map[string]any {
	repository, tag, _ := splitImage(o.Image)
	service := map[string]any{"type": string(o.ServiceType), "port": int64(o.ServicePort)}
	etcd := map[string]any{"persistence": map[string]any{
		"enabled": o.EtcdPersistence, "size": o.EtcdCapacity, "storageClass": o.EtcdStorageClass,
	}}
	if len(o.EtcdServers) > 0 {
		etcd["servers"] = toAny(o.EtcdServers)
	}
	dns := map[string]any{"enabled": o.DNSZone != ""}
	if o.DNSZone != "" {
		dns["zone"] = o.DNSZone
		dns["service"] = map[string]any{"type": string(o.ServiceType)}
		if addrs.DNS != "" {
			dns["advertiseAddress"] = addrs.DNS
		}
	}
	apiserver := map[string]any{"service": service}
	if o.AdvertiseAddress != "" {
		apiserver["advertiseAddress"] = o.AdvertiseAddress
	}
	if host := hostOf(addrs.APIServer); host != "" && host != o.AdvertiseAddress {
		apiserver["extraSANs"] = toAny(appendNew(stringsAt(o.File, "apiserver", "extraSANs"), host))
	}
	if args := append(stringsAt(o.File, "apiserver", "extraArgs"), o.APIServerArgs...); len(args) > 0 {
		apiserver["extraArgs"] = toAny(args)
	}
	controllerManager := map[string]any{}
	if args := append(stringsAt(o.File, "controllerManager", "extraArgs"), o.ControllerManagerArgs...); len(args) > 0 {
		controllerManager["extraArgs"] = toAny(args)
	}
	own := map[string]any{
		"federationName":    o.Name,
		"image":             map[string]any{"repository": repository, "tag": tag},
		"apiserver":         apiserver,
		"controllerManager": controllerManager,
		"etcd":              etcd,
		"dns":               dns,
		"certificates":      map[string]any{"existingSecret": o.CredentialsSecret()},
	}
	return merge(deepCopy(o.File), own)
}

// merge sets src's values into dst, table by table, as Helm merges values
// files: a later file's scalars and lists replace, its tables merge.
func merge(dst, src map[string]any) map[string]any {
	for k, v := range src {
		if sub, ok := v.(map[string]any); ok {
			if d, ok := dst[k].(map[string]any); ok {
				dst[k] = merge(d, sub)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

func deepCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = deepCopy(sub)
		}
		out[k] = v
	}
	return out
}

// valueAt is the value at a path of tables, nil when absent.
func valueAt(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		t, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = t[k]
	}
	return v
}

// stringAt is the string at path, "" when absent or not a string.
func stringAt(m map[string]any, path ...string) string {
	s, _ := valueAt(m, path...).(string)
	return s
}

// intAt is the number at path, def when absent.
func intAt(m map[string]any, def int, path ...string) int {
	switch n := valueAt(m, path...).(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return def
}

// stringsAt is the list of strings at path.
func stringsAt(m map[string]any, path ...string) []string {
	list, _ := valueAt(m, path...).([]any)
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func appendNew(list []string, s string) []string {
	for _, v := range list {
		if v == s {
			return list
		}
	}
	return append(list, s)
}
