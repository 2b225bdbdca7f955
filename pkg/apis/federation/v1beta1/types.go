package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServerAddressByClientCIDR tells a client which address of the member
// cluster's API server to use, depending on the client's own IP address.
type ServerAddressByClientCIDR struct {
	// ClientCIDR is the network the client must match to use ServerAddress.
	ClientCIDR string `json:"clientCIDR" protobuf:"bytes,1,opt,name=clientCIDR"`
	// ServerAddress is the address of the member cluster's API server,
	// a host[:port] or an https:// URL.
	ServerAddress string `json:"serverAddress" protobuf:"bytes,2,opt,name=serverAddress"`
}

// ClusterSpec describes how to reach a member cluster.
type ClusterSpec struct {
	// ServerAddressByClientCIDRs lists the addresses of the member cluster's
	// API server, by client network. At least one entry is required.
	// +listType=atomic
	ServerAddressByClientCIDRs []ServerAddressByClientCIDR `json:"serverAddressByClientCIDRs" protobuf:"bytes,1,rep,name=serverAddressByClientCIDRs"`
	// SecretRef names the Secret in the federation-system namespace that
	// holds the credentials for the member cluster: key "kubeconfig", or keys
	// "token" and "ca.crt".
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty" protobuf:"bytes,2,opt,name=secretRef"`
	// Connection says how the federation reaches the member: Direct (the
	// default) dials the server address with the Secret's credentials;
	// Agent goes through the tunnel that the federation-agent in the
	// member holds open to the federation, and needs no Secret: the
	// member's credential stays in the member.
	// +optional
	Connection ClusterConnection `json:"connection,omitempty" protobuf:"bytes,3,opt,name=connection,casttype=ClusterConnection"`
}

// ClusterConnection is how the federation reaches a member.
type ClusterConnection string

const (
	// ConnectionDirect: the federation dials the member's API server.
	ConnectionDirect ClusterConnection = "Direct"
	// ConnectionAgent: the member's agent dials out to the federation and
	// the federation reaches the member through the agent's tunnel.
	ConnectionAgent ClusterConnection = "Agent"
)

// IsAgent reports whether the federation reaches cluster through an agent.
func IsAgent(cluster *Cluster) bool { return cluster.Spec.Connection == ConnectionAgent }

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterProxyOptions are the options of a request to a cluster's proxy
// subresource: the path under the member's API.
type ClusterProxyOptions struct {
	metav1.TypeMeta `json:",inline"`
	// Path is the path of the request at the member's API server.
	// +optional
	Path string `json:"path,omitempty" protobuf:"bytes,1,opt,name=path"`
}

// ClusterConditionType is the type of a condition of a Cluster.
type ClusterConditionType string

const (
	// ClusterReady means the member cluster answers its readiness probe.
	ClusterReady ClusterConditionType = "Ready"
	// ClusterOffline means the member cluster cannot be reached at all.
	ClusterOffline ClusterConditionType = "Offline"
)

// ClusterCondition describes the state of a Cluster at a point in time.
type ClusterCondition struct {
	// Type of the condition: Ready or Offline.
	Type ClusterConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=ClusterConditionType"`
	// Status of the condition: True, False or Unknown.
	Status corev1.ConditionStatus `json:"status" protobuf:"bytes,2,opt,name=status,casttype=k8s.io/api/core/v1.ConditionStatus"`
	// LastProbeTime is when the condition was last probed.
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty" protobuf:"bytes,3,opt,name=lastProbeTime"`
	// LastTransitionTime is when the condition last changed its status.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty" protobuf:"bytes,4,opt,name=lastTransitionTime"`
	// Reason is a one-word, CamelCase reason for the last transition.
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,5,opt,name=reason"`
	// Message is a human-readable message about the last transition.
	// +optional
	Message string `json:"message,omitempty" protobuf:"bytes,6,opt,name=message"`
}

// ClusterStatus is the observed state of a member cluster, written by the
// cluster controller.
type ClusterStatus struct {
	// Conditions are the current conditions of the cluster (Ready, Offline).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []ClusterCondition `json:"conditions,omitempty" protobuf:"bytes,1,rep,name=conditions"`
	// Zones is the sorted set of zones the cluster's nodes are in.
	// +optional
	// +listType=set
	Zones []string `json:"zones,omitempty" protobuf:"bytes,5,rep,name=zones"`
	// Region is the region the cluster's nodes are in.
	// +optional
	Region string `json:"region,omitempty" protobuf:"bytes,6,opt,name=region"`
}

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Cluster registers a member cluster with the federation.
type Cluster struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata. The name is a DNS-1035 label.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec says how to reach the member cluster.
	// +optional
	Spec ClusterSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	// Status is the observed state of the member cluster.
	// +optional
	Status ClusterStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterList is a list of Clusters.
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Items are the Clusters.
	Items []Cluster `json:"items" protobuf:"bytes,2,rep,name=items"`
}
