package federatedtypes

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func service(spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service", "spec": spec}}
}

func TestPruneServiceDropsTheFederationsAddressButKeepsHeadless(t *testing.T) {
	virtual := service(map[string]any{"clusterIP": "198.18.0.7", "clusterIPs": []any{"198.18.0.7"}, "ipFamilies": []any{"IPv4"},
		"ports": []any{map[string]any{"port": int64(80), "nodePort": int64(30080)}}})
	pruneService(virtual)
	if _, found, _ := unstructured.NestedFieldNoCopy(virtual.Object, "spec", "clusterIP"); found {
		t.Errorf("the federation's virtual address travels to the members: %v", virtual.Object["spec"])
	}
	ports, _, _ := unstructured.NestedSlice(virtual.Object, "spec", "ports")
	if _, found := ports[0].(map[string]any)["nodePort"]; found {
		t.Errorf("a node port travels to the members: %v", ports)
	}

	headless := service(map[string]any{"clusterIP": "None", "clusterIPs": []any{"None"}, "ipFamilies": []any{"IPv4"}})
	pruneService(headless)
	ip, _, _ := unstructured.NestedString(headless.Object, "spec", "clusterIP")
	ips, _, _ := unstructured.NestedStringSlice(headless.Object, "spec", "clusterIPs")
	if ip != "None" || len(ips) != 1 || ips[0] != "None" {
		t.Errorf("a headless Service's copy is not headless: clusterIP %q, clusterIPs %v", ip, ips)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(headless.Object, "spec", "ipFamilies"); found {
		t.Errorf("ipFamilies travel to the members: %v", headless.Object["spec"])
	}
}
