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
// API-only members (ClusterSpec.APIOnly) run a kube-apiserver and a
// kube-controller-manager with the token controller alone: the member-count
// benchmark's members.
//
// An Environment lives in a run folder: certificates, kubeconfigs, logs of every
// process and a state file that lets another process (make down) stop it.
package memberenv
