package memberenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// What `kubectl logs`, `exec`, `attach` and `port-forward` give for a pod of
// a full member. kwok serves them from its own server (the kubelet API the
// member's kube-apiserver calls), as its ClusterLogs, ClusterAttach,
// ClusterExec and ClusterPortForward configuration in the member's
// kwok.yaml says:
//   - logs and attach read the member's pod log, <member>/pods/pods.log,
//     which starts with PodLogLine and grows with AppendPodLog (logs -f and
//     attach show what is appended);
//   - exec runs the command on this machine, as the user running memberenv,
//     in <member>/pods/exec, which holds ExecClusterFile, with
//     ExecClusterEnv set to the member's name. kwok v0.8.0 reports a failed
//     command as an error naming its exit status (kubectl exits 1), and
//     never closes a command's stdin: with -i it gets the input but not its
//     end, so a command that reads stdin to its end never ends;
//   - port-forward, to any port of any pod, reaches the member's
//     load-balancer simulator process, which answers every HTTP request with
//     PortForwardAnswer.
const (
	// ExecClusterEnv names the member in the environment of the commands
	// `kubectl exec` runs in its pods.
	ExecClusterEnv = "MEMBERENV_CLUSTER"
	// ExecClusterFile, in the working directory of those commands, holds
	// the member's name and a newline (`kubectl exec POD -- cat cluster`).
	ExecClusterFile = "cluster"
)

// PodLogLine is the first line of the log of every pod of the named member.
func PodLogLine(cluster string) string { return "log of a pod in " + cluster }

// PortForwardAnswer is the body of the answer to any HTTP request sent
// through `kubectl port-forward` to a pod of the named member.
func PortForwardAnswer(cluster string) string { return cluster }

// AppendPodLog appends line to the log of every pod of the named member:
// `kubectl logs -f` and `kubectl attach` show it. A line with newlines
// becomes several log lines.
func (e *Environment) AppendPodLog(cluster, line string) error {
	m := e.Member(cluster)
	if m == nil {
		return fmt.Errorf("memberenv: no cluster named %q", cluster)
	}
	if m.Spec.APIOnly {
		return fmt.Errorf("memberenv: %s is API-only: it has no pods", cluster)
	}
	return appendCRILog(m.podLog(), time.Now(), strings.Split(line, "\n")...)
}

// appendCRILog appends lines to a log file in the CRI format, the one
// kubelets (and kwok) read: "<RFC 3339 time> stdout F <line>". One write, so
// that a reader following the file never sees half of it.
func appendCRILog(path string, at time.Time, lines ...string) error {
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%s stdout F %s\n", at.UTC().Format(time.RFC3339Nano), l)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(b.String())
	return errors.Join(err, f.Close())
}

func (m *Member) podLog() string  { return m.path(filepath.Join("pods", "pods.log")) }
func (m *Member) execDir() string { return m.path(filepath.Join("pods", "exec")) }

// writePodFiles writes a new member's pod log and exec folder.
func (m *Member) writePodFiles() error {
	if err := os.MkdirAll(m.execDir(), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(m.execDir(), ExecClusterFile), []byte(m.Spec.Name+"\n"), 0o644); err != nil {
		return err
	}
	return appendCRILog(m.podLog(), time.Now(), PodLogLine(m.Spec.Name))
}

// kwokConfig is the member's kwok.yaml, which kwok reads besides the
// stages: where logs, attach, exec and port-forward of every pod go.
func (m *Member) kwokConfig() ([]byte, error) {
	doc := func(kind string, spec map[string]any) map[string]any {
		return map[string]any{
			"apiVersion": "kwok.x-k8s.io/v1alpha1",
			"kind":       kind,
			"metadata":   map[string]any{"name": "memberenv"},
			"spec":       spec,
		}
	}
	docs := []map[string]any{
		doc("ClusterLogs", map[string]any{"logs": []any{map[string]any{"logsFile": m.podLog(), "follow": true}}}),
		doc("ClusterAttach", map[string]any{"attaches": []any{map[string]any{"logsFile": m.podLog()}}}),
		doc("ClusterExec", map[string]any{"execs": []any{map[string]any{"local": map[string]any{
			"workDir": m.execDir(),
			"envs":    []any{map[string]any{"name": ExecClusterEnv, "value": m.Spec.Name}},
		}}}}),
		doc("ClusterPortForward", map[string]any{"forwards": []any{map[string]any{"target": map[string]any{
			"address": "127.0.0.1",
			"port":    m.Ports[LoadBalancer],
		}}}}),
	}
	var out []string
	for _, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return nil, err
		}
		out = append(out, string(b))
	}
	return []byte(strings.Join(out, "---\n")), nil
}

// writeKwokConfig writes kwok.yaml; at each start of kwok, since the
// load-balancer simulator's port may have moved.
func (m *Member) writeKwokConfig() error {
	b, err := m.kwokConfig()
	if err != nil {
		return err
	}
	return os.WriteFile(m.path("kwok.yaml"), b, 0o600)
}

// kubeletAddress is the node address kube-apiserver reaches kwok's kubelet
// server at, for logs, exec, attach and port-forward: loopback, where kwok
// listens. It is an address of type kubeletAddressType, which kube-apiserver
// alone prefers (--kubelet-preferred-address-types): the InternalIP stays
// 10.<n>.0.1, which pods' hostIP and anything reading node addresses keep
// seeing; kube-apiserver dials the IP literal as it is.
const (
	kubeletAddress     = "127.0.0.1"
	kubeletAddressType = corev1.NodeInternalDNS
)

// nodeStatus is what memberenv sets in the status of its nodes: kwok's
// node-initialize stage adds InternalIP and Hostname only when a node has
// neither, and the kubelet port only with --node-port, so it keeps these.
func (m *Member) nodeStatus(name string) corev1.NodeStatus {
	return corev1.NodeStatus{
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: m.nodeIP()},
			{Type: corev1.NodeHostName, Address: name},
			{Type: kubeletAddressType, Address: kubeletAddress},
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(m.Ports[Kwok])}},
	}
}

// nodeIP is the InternalIP of the member's nodes (kwok's --node-ip).
func (m *Member) nodeIP() string { return strings.TrimSuffix(m.PodCIDR, "/16") }

// ensureKubeletEndpoints points every node of m at kwok's current port (and
// loopback address), for a kwok that moved off a taken port after its nodes
// were made.
func ensureKubeletEndpoints(ctx context.Context, client kubernetes.Interface, m *Member) error {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, n := range nodes.Items {
		if reachesKwok(&n, m.Ports[Kwok]) {
			continue
		}
		// Strategic merge: addresses merge by type.
		patch, err := json.Marshal(map[string]any{"status": map[string]any{
			"addresses":       []corev1.NodeAddress{{Type: kubeletAddressType, Address: kubeletAddress}},
			"daemonEndpoints": corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(m.Ports[Kwok])}},
		}})
		if err != nil {
			return err
		}
		if _, err := client.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			return fmt.Errorf("cluster %s: pointing node %s at kwok: %w", m.Spec.Name, n.Name, err)
		}
	}
	return nil
}

// reachesKwok reports whether kube-apiserver reaches n's kubelet at kwok's port.
func reachesKwok(n *corev1.Node, port int) bool {
	if int(n.Status.DaemonEndpoints.KubeletEndpoint.Port) != port {
		return false
	}
	for _, a := range n.Status.Addresses {
		if a.Type == kubeletAddressType {
			return a.Address == kubeletAddress
		}
	}
	return false
}

// podPortsServingLine is what ServePodPorts writes once it listens.
func podPortsServingLine(address string) string {
	return "Serving pods' forwarded ports on " + address
}

// ServePodPorts answers every HTTP request on l with
// PortForwardAnswer(cluster) until ctx ends, and closes l: the server behind
// every pod port that `kubectl port-forward` opens in a full member (the
// member's load-balancer simulator process runs it). It first says on
// announce where it serves.
func ServePodPorts(ctx context.Context, l net.Listener, cluster string, announce io.Writer) error {
	srv := &http.Server{
		ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, PortForwardAnswer(cluster))
		}),
	}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Fprintln(announce, podPortsServingLine(l.Addr().String()))
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
