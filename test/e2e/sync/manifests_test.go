package sync_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// federatedType is one of the ten federated types and a manifest of it.
type federatedType struct {
	name     string
	resource schema.GroupVersionResource
	// manifest returns a YAML object named name in namespace ns.
	manifest func(ns, name string) string
}

const podTemplate = `
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: c
        image: registry.k8s.io/pause:3.10`

func workload(kind, extra string) func(ns, name string) string {
	return func(ns, name string) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: %[3]s
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  %[4]s
  selector: {matchLabels: {app: %[1]s}}
  template:`+podTemplate, name, ns, kind, extra)
	}
}

var federatedTypes = []federatedType{
	{"configmaps", schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, func(ns, name string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {key: value}\n", name, ns)
	}},
	{"secrets", schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, func(ns, name string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: %s}\nstringData: {password: s3cr3t}\n", name, ns)
	}},
	{"services", schema.GroupVersionResource{Version: "v1", Resource: "services"}, func(ns, name string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s}\nspec:\n  selector: {app: %s}\n  ports: [{port: 80}]\n", name, ns, name)
	}},
	{"deployments", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, workload("Deployment", "replicas: 1")},
	{"replicasets", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, workload("ReplicaSet", "replicas: 1")},
	{"daemonsets", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, workload("DaemonSet", "")},
	{"ingresses", schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}, func(ns, name string) string {
		return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: %s, namespace: %s}
spec:
  defaultBackend: {service: {name: %s, port: {number: 80}}}
`, name, ns, name)
	}},
	{"jobs", schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, func(ns, name string) string {
		return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: registry.k8s.io/pause:3.10
`, name, ns)
	}},
	{"horizontalpodautoscalers", schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}, func(ns, name string) string {
		// With its target: an HPA is written to a member only where its
		// target is the federation's copy, and divided over the clusters
		// that run it (12: a share for each of up to 4 clusters).
		return workload("Deployment", "replicas: 12")(ns, name) + fmt.Sprintf(`
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: %[1]s}
  minReplicas: 1
  maxReplicas: 12
`, name, ns)
	}},
}
