package kubefed

import (
	"context"
	"fmt"
	"regexp"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// The member's cluster DNS configuration that join extends.
const (
	memberDNSNamespace = "kube-system"
	memberDNSConfigMap = "coredns"
	corefileKey        = "Corefile"
)

// federationDNS reads the federation's DNS zone and server, which init
// publishes; ok is false when the federation has no DNS.
func federationDNS(ctx context.Context, fed kubernetes.Interface) (zone, server string, ok bool, err error) {
	cm, err := fed.CoreV1().ConfigMaps(federationv1beta1.SystemNamespace).Get(ctx, federationv1beta1.DNSConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("reading the federation's DNS settings: %w", err)
	}
	zone, server = cm.Data[federationv1beta1.DNSZoneKey], cm.Data[federationv1beta1.DNSServerKey]
	return zone, server, zone != "" && server != "", nil
}

// forwardBlock is the Corefile server block that sends the federation zone
// to the federation's DNS server, between markers that unjoin finds.
func forwardBlock(fed, zone, server string) string {
	return fmt.Sprintf("# BEGIN federation %s\n%s {\n    forward . %s\n}\n# END federation %s\n", fed, zone, server, fed)
}

func blockPattern(fed string) *regexp.Regexp {
	q := regexp.QuoteMeta(fed)
	return regexp.MustCompile(`(?s)\n# BEGIN federation ` + q + `\n.*?# END federation ` + q + `\n`)
}

// addForwarding adds (or refreshes) the federation's block in the member's
// kube-system/coredns ConfigMap. A member without that ConfigMap is left
// alone: changed is false.
func addForwarding(ctx context.Context, member kubernetes.Interface, fed, zone, server string) (changed bool, err error) {
	return editCorefile(ctx, member, func(corefile string) string {
		// The block always starts with a newline of its own, so that taking
		// it out gives back the Corefile exactly as it was.
		return blockPattern(fed).ReplaceAllString(corefile, "") + "\n" + forwardBlock(fed, zone, server)
	})
}

// removeForwarding takes the federation's block out again.
func removeForwarding(ctx context.Context, member kubernetes.Interface, fed string) (changed bool, err error) {
	return editCorefile(ctx, member, func(corefile string) string {
		return blockPattern(fed).ReplaceAllString(corefile, "")
	})
}

func editCorefile(ctx context.Context, member kubernetes.Interface, edit func(string) string) (bool, error) {
	configMaps := member.CoreV1().ConfigMaps(memberDNSNamespace)
	cm, err := configMaps.Get(ctx, memberDNSConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s/%s in the member: %w", memberDNSNamespace, memberDNSConfigMap, err)
	}
	before := cm.Data[corefileKey]
	after := edit(before)
	if after == before {
		return false, nil
	}
	cm = cm.DeepCopy()
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[corefileKey] = after
	if _, err := configMaps.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return false, fmt.Errorf("updating %s/%s in the member: %w", memberDNSNamespace, memberDNSConfigMap, err)
	}
	return true, nil
}
