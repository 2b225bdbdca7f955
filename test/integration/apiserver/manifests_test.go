package apiserver

import "fmt"

// served describes one served resource for the lifecycle test.
type served struct {
	// resource is the fully qualified name kubectl is given (deployments.v1beta1.extensions).
	resource string
	// clusterScoped resources take no namespace.
	clusterScoped bool
	// manifest is the object's YAML, with %[1]s for its name, %[2]s for its
	// namespace and %[3]s for the value of its "marker" label.
	manifest string
	// columns are headers `kubectl get` must print.
	columns []string
	// unnamedTable is set when the table has no NAME column (events).
	unnamedTable bool
	// scalable resources are scaled with `kubectl scale`.
	scalable bool
}

// podTemplate is a pod template with matching selector, indented for a
// workload's spec.
const podTemplate = `  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - {name: web, image: nginx:alpine}
`

// servedResources are every resource the server serves, with a valid
// manifest.
var servedResources = []served{
	{
		resource: "namespaces", clusterScoped: true, columns: []string{"STATUS"},
		manifest: `apiVersion: v1
kind: Namespace
metadata: {name: %[1]s, labels: {marker: %[3]s}}
`,
	},
	{
		resource: "services", columns: []string{"TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)"},
		manifest: `apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
  type: LoadBalancer
  selector: {app: %[1]s}
  ports: [{name: http, port: 80, targetPort: 8080}]
`,
	},
	{
		resource: "secrets", columns: []string{"TYPE", "DATA"},
		manifest: `apiVersion: v1
kind: Secret
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
stringData: {password: hunter2}
`,
	},
	{
		resource: "configmaps", columns: []string{"DATA"},
		manifest: `apiVersion: v1
kind: ConfigMap
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
data: {key: value}
`,
	},
	{
		resource: "events", unnamedTable: true, columns: []string{"REASON", "OBJECT", "MESSAGE"},
		manifest: `apiVersion: v1
kind: Event
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
involvedObject: {kind: Deployment, name: web, namespace: %[2]s, apiVersion: apps/v1}
reason: Testing
message: an event
type: Normal
`,
	},
	{
		resource: "deployments.apps", scalable: true, columns: []string{"READY", "UP-TO-DATE", "AVAILABLE"},
		manifest: `apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
  replicas: 2
` + podTemplate,
	},
	{
		resource: "replicasets.apps", scalable: true, columns: []string{"DESIRED", "CURRENT", "READY"},
		manifest: `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
  replicas: 2
` + podTemplate,
	},
	{
		resource: "daemonsets.apps", columns: []string{"DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR"},
		manifest: `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
` + podTemplate,
	},
	{
		resource: "ingresses.networking.k8s.io", columns: []string{"CLASS", "HOSTS", "ADDRESS", "PORTS"},
		manifest: `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
  rules:
  - host: example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`,
	},
	{
		resource: "jobs.batch", columns: []string{"COMPLETIONS"},
		manifest: `apiVersion: batch/v1
kind: Job
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
  parallelism: 2
  completions: 4
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: work, image: busybox}
`,
	},
	{
		resource: "horizontalpodautoscalers.autoscaling", columns: []string{"REFERENCE", "TARGETS", "MINPODS", "MAXPODS"},
		manifest: `apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 5
  targetCPUUtilizationPercentage: 80
`,
	},
	{
		resource: "deployments.v1beta1.extensions", scalable: true, columns: []string{"READY", "UP-TO-DATE", "AVAILABLE"},
		manifest: `apiVersion: extensions/v1beta1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
  replicas: 2
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - {name: web, image: nginx:alpine}
`,
	},
	{
		resource: "replicasets.v1beta1.extensions", scalable: true, columns: []string{"DESIRED", "CURRENT", "READY"},
		manifest: `apiVersion: extensions/v1beta1
kind: ReplicaSet
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
  replicas: 2
` + podTemplate,
	},
	{
		resource: "daemonsets.v1beta1.extensions", columns: []string{"DESIRED", "CURRENT", "READY"},
		manifest: `apiVersion: extensions/v1beta1
kind: DaemonSet
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
` + podTemplate,
	},
	{
		resource: "ingresses.v1beta1.extensions", columns: []string{"HOSTS", "ADDRESS", "PORTS"},
		manifest: `apiVersion: extensions/v1beta1
kind: Ingress
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
  rules:
  - host: example.com
    http:
      paths:
      - {path: /, backend: {serviceName: web, servicePort: 80}}
`,
	},
	{
		resource: "serviceaccounts", columns: []string{"AGE"},
		manifest: `apiVersion: v1
kind: ServiceAccount
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
imagePullSecrets: [{name: registry}]
`,
	},
	{
		resource: "statefulsets.apps", scalable: true, columns: []string{"READY"},
		manifest: `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
  replicas: 2
  serviceName: %[1]s
` + podTemplate,
	},
	{
		resource: "cronjobs.batch", columns: []string{"SCHEDULE", "SUSPEND", "ACTIVE", "LAST SCHEDULE"},
		manifest: `apiVersion: batch/v1
kind: CronJob
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - {name: work, image: busybox}
`,
	},
	{
		resource: "poddisruptionbudgets.policy", columns: []string{"MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS"},
		manifest: `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: %[1]s}}
`,
	},
	{
		resource: "networkpolicies.networking.k8s.io", columns: []string{"POD-SELECTOR"},
		manifest: `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
  podSelector: {matchLabels: {app: %[1]s}}
  policyTypes: [Ingress]
`,
	},
	{
		resource: "persistentvolumeclaims", columns: []string{"STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS"},
		manifest: `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`,
	},
	{
		resource: "limitranges", columns: []string{"CREATED AT"},
		manifest: `apiVersion: v1
kind: LimitRange
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
  limits: [{type: Container, default: {cpu: 500m}}]
`,
	},
	{
		resource: "resourcequotas", columns: []string{"REQUEST", "LIMIT"},
		manifest: `apiVersion: v1
kind: ResourceQuota
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec:
  hard: {pods: "10", requests.cpu: "2"}
`,
	},
	{
		resource: "clusters.federation", clusterScoped: true, columns: []string{"STATUS", "ZONES", "REGION"},
		manifest: `apiVersion: federation/v1beta1
kind: Cluster
metadata: {name: %[1]s, labels: {marker: %[3]s}}
spec:
  serverAddressByClientCIDRs:
  - {clientCIDR: 0.0.0.0/0, serverAddress: "https://10.1.2.3:6443"}
  secretRef: {name: %[1]s-credentials}
`,
	},
}

// fmtManifest returns the manifest of a served resource for name in
// namespace, with the marker label "before".
func fmtManifest(resource, name, namespace string) string {
	for _, r := range servedResources {
		if r.resource == resource {
			return fmt.Sprintf(r.manifest, name, namespace, "before")
		}
	}
	panic("no manifest for " + resource)
}
