// Package memberenv runs real Kubernetes member clusters on loopback for tests,
// demos and benchmarks.
//
// Every member is a real control plane (kube-apiserver with TLS, token
// authentication and RBAC; kube-controller-manager; kube-scheduler) on one etcd
// shared by all members, each member under its own key prefix. Nodes and pods are
// simulated by kwok, and a small load-balancer simulator plays the cloud's part by
// writing status.loadBalancer.ingress of LoadBalancer Services. The binaries are
// built from the Go module proxy by the tools modules under test/tools and cached
// in .cache/bin, keyed by version.
//
// kubectl logs (-f), exec, attach and port-forward work against every pod of a
// full member, through kwok's own server: the member's kube-apiserver reaches it
// on loopback (each node has an InternalDNS address 127.0.0.1 and kwok's port,
// and kwok shows a certificate of the environment's CA), and kwok's ClusterLogs,
// ClusterAttach, ClusterExec and ClusterPortForward configuration (kwok.yaml in
// the member's folder) serve the member's pod log (pods/pods.log), run exec
// commands on this machine in pods/exec, and forward every pod port to a server
// in the load-balancer simulator's process. PodLogLine, AppendPodLog,
// ExecClusterEnv, ExecClusterFile and PortForwardAnswer are what a test sees.
// Nodes keep their InternalIP 10.<n>.0.1 (the pods' hostIP) for everything else.
//
// API-only members (ClusterSpec.APIOnly) run a kube-apiserver and a
// kube-controller-manager with the token controller alone: the member-count
// benchmark's members.
//
// An Environment lives in a run folder: certificates, kubeconfigs, logs of every
// process and a state file that lets another process (make down) stop it.
package memberenv
