package propagation

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/karmadaenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// Karmada's side of the comparison: its namespace, and the label its
// objects carry (Karmada copies a template's labels to the members).
const (
	karmadaNamespace = "bench-karmada"
	karmadaLabel     = "bench.federation.kubernetes.io/karmada"
	karmadaClusters  = 3
)

var (
	karmadaSelector = karmadaLabel + "=true"
	policyResource  = schema.GroupVersionResource{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "propagationpolicies"}
)

// side is one control plane under comparison: where its objects are
// created, how its copies are found in the members, and its processes.
type side struct {
	name      string
	client    kubernetes.Interface
	namespace string
	// labels go on every object created; selector finds the copies.
	labels   map[string]string
	selector string
	pids     func() map[string]int
}

// karmadaBench is the federation's bench plus Karmada on the same members.
type karmadaBench struct {
	*bench
	fedSys, kSys *side
	plane        *karmadaenv.Plane
	kdyn         dynamic.Interface
	// more says whether a scenario follows the one running.
	more bool
}

// BenchmarkKarmada runs the scenarios against the federation and then
// Karmada, on the same 3 members in the same run, measured the same way
// (watches on the members), and prints federation ÷ Karmada. It needs
// Karmada's prebuilt programs and source tree (make bench-karmada).
func BenchmarkKarmada(b *testing.B) {
	if *karmadaBinFlag == "" && *karmadaSrcFlag == "" {
		b.Skip("no -karmada-bin and -karmada-src: run make bench-karmada KARMADA_BIN=... KARMADA_SRC=...")
	}
	if err := karmadaenv.Check(*karmadaBinFlag, *karmadaSrcFlag); err != nil {
		b.Fatal(err)
	}
	requireTools(b)
	scenarios, err := parseKarmadaScenarios(*karmadaScenariosFlag)
	if err != nil {
		b.Fatal(err)
	}
	rep, out, bin := startReport(b, "karmada.json", (*report).printKarmada)
	kb := setUpKarmada(b, bin, rep)
	ctx := context.Background()
	for i, s := range allKarmadaScenarios {
		if !scenarios[s] {
			continue
		}
		// A scenario clears its objects away only for a scenario after it.
		kb.more = slices.ContainsFunc(allKarmadaScenarios[i+1:], func(next string) bool { return scenarios[next] })
		start := time.Now()
		switch s {
		case karmadaBurst:
			kb.burstBoth(ctx)
		case karmadaSteady:
			kb.steadyBoth(ctx)
		case karmadaDeployments:
			kb.deploymentsBoth(ctx)
		case karmadaCost:
			kb.costBoth(ctx)
		}
		fmt.Printf("karmada comparison: %s done in %s\n", s, time.Since(start).Round(time.Second))
		if err := rep.write(out); err != nil {
			b.Errorf("writing %s: %v", out, err)
		}
	}
}

// setUpKarmada starts 3 members with a federation joined to them (setUp),
// then Karmada's plane with the same members joined in push mode, and
// proves both propagate: one ConfigMap each, seen in every member.
func setUpKarmada(b *testing.B, bin string, rep *report) *karmadaBench {
	bn := setUp(b, bin, karmadaClusters)
	bn.rep = rep
	start := time.Now()
	root, err := memberenv.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	tools, err := memberenv.EnsureBinaries(context.Background(), root, nil)
	if err != nil {
		b.Fatal(err)
	}
	plane, err := karmadaenv.Start(context.Background(), karmadaenv.Options{
		Dir: filepath.Join(b.TempDir(), "karmada"), KarmadaBin: *karmadaBinFlag, KarmadaSrc: *karmadaSrcFlag,
		Etcd: tools.Etcd, KubeAPIServer: tools.KubeAPIServer, KubeControllerManager: tools.KubeControllerManager,
		ExtraFlags: map[string][]string{karmadaenv.ControllerManager: strings.Fields(*karmadaCMFlags), karmadaenv.Scheduler: strings.Fields(*karmadaSchedFlags)},
		Logf:       func(f string, a ...any) { fmt.Printf(f+"\n", a...) },
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = plane.Stop()
		// Keep Karmada's logs past the run's temporary folder.
		kept := filepath.Join(os.TempDir(), "karmada-logs", b.Name())
		if err := os.RemoveAll(kept); err == nil {
			if err := os.CopyFS(kept, os.DirFS(plane.LogDir())); err == nil {
				fmt.Printf("Karmada's logs are kept in %s\n", kept)
			}
		}
	})
	kb := &karmadaBench{bench: bn, plane: plane}
	if *karmadaCMFlags != "" || *karmadaSchedFlags != "" {
		bn.note(fmt.Sprintf("Karmada run with controller manager flags %q, scheduler flags %q", *karmadaCMFlags, *karmadaSchedFlags))
	}
	fail := func(err error) {
		b.Helper()
		if err != nil {
			b.Fatalf("%v\n%s", err, plane.LogTails(15))
		}
	}
	for _, c := range bn.clusters {
		// The member's admin context, which fedenv.WithMembers copied
		// into the user's kubeconfig.
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: bn.u.Kubeconfig}, &clientcmd.ConfigOverrides{CurrentContext: c}).ClientConfig()
		fail(err)
		fail(plane.Join(context.Background(), c, cfg))
	}
	cfg, err := plane.RESTConfig()
	fail(err)
	cfg.QPS = -1
	kc, err := kubernetes.NewForConfig(cfg)
	fail(err)
	kb.kdyn, err = dynamic.NewForConfig(cfg)
	fail(err)
	fedPIDs := func() map[string]int {
		cm, api := bn.planePIDs()
		return map[string]int{"controller manager": cm, "apiserver": api}
	}
	kb.fedSys = &side{name: "federation", client: bn.fed, namespace: fedNamespace, selector: fedSelector, pids: fedPIDs}
	kb.kSys = &side{name: "Karmada", client: kc, namespace: karmadaNamespace,
		labels: map[string]string{karmadaLabel: "true"}, selector: karmadaSelector, pids: plane.PIDs}

	// Karmada propagates every namespace to every member by itself.
	if _, err := kc.CoreV1().Namespaces().Create(context.Background(), namespace(karmadaNamespace), metav1.CreateOptions{}); err != nil {
		fail(fmt.Errorf("creating namespace %s in Karmada: %w", karmadaNamespace, err))
	}
	fail(poll.Until(context.Background(), 2*time.Minute, "namespace "+karmadaNamespace+" with a default ServiceAccount in every member", func(ctx context.Context) error {
		for _, c := range bn.clusters {
			if _, err := bn.watchers[c].CoreV1().ServiceAccounts(karmadaNamespace).Get(ctx, "default", metav1.GetOptions{}); err != nil {
				if apierrors.IsNotFound(err) {
					return fmt.Errorf("not yet in %s", c)
				}
				return err
			}
		}
		return nil
	}))
	fail(kb.configMapPolicy(context.Background()))
	for _, s := range []*side{kb.fedSys, kb.kSys} {
		took, err := kb.proveOne(s)
		fail(err)
		fmt.Printf("karmada comparison: %s propagated one ConfigMap to %d members in %.2f s\n", s.name, len(bn.clusters), took.Seconds())
		bn.note(fmt.Sprintf("setup: %s propagated one ConfigMap to every member in %.2f s", s.name, took.Seconds()))
	}
	fmt.Printf("karmada comparison: Karmada joined to the %d members after %s\n", len(bn.clusters), time.Since(start).Round(time.Second))
	return kb
}

// proveOne propagates one ConfigMap through s and deletes it again.
func (kb *karmadaBench) proveOne(s *side) (time.Duration, error) {
	ctx := context.Background()
	names := []string{"first"}
	o := kb.observe(s.namespace, s.selector)
	defer o.stop()
	start := time.Now()
	if err := kb.createConfigMaps(ctx, s, names, "1"); err != nil {
		return 0, err
	}
	_, last, err := o.wait(names, start, present("1"), time.Minute, s.name+": the first ConfigMap")
	if err != nil {
		return 0, err
	}
	if err := kb.deleteConfigMaps(ctx, s, names); err != nil {
		return 0, err
	}
	_, _, err = o.wait(names, start, gone, time.Minute, s.name+": the first ConfigMap deleted")
	return last.Sub(start), err
}

// configMapPolicy propagates Karmada's labelled ConfigMaps to every member.
func (kb *karmadaBench) configMapPolicy(ctx context.Context) error {
	return kb.createPolicy(ctx, "configmaps", map[string]any{
		"resourceSelectors": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"labelSelector": map[string]any{"matchLabels": map[string]any{karmadaLabel: "true"}}}},
		"placement": map[string]any{"clusterAffinity": map[string]any{"clusterNames": kb.clusterNames()}},
	})
}

func (kb *karmadaBench) clusterNames() []any {
	out := make([]any, len(kb.clusters))
	for i, c := range kb.clusters {
		out[i] = c
	}
	return out
}

// createPolicy creates a PropagationPolicy in Karmada's namespace.
func (kb *karmadaBench) createPolicy(ctx context.Context, name string, spec map[string]any) error {
	p := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
		"metadata": map[string]any{"name": name, "namespace": karmadaNamespace},
		"spec":     spec,
	}}
	if _, err := kb.kdyn.Resource(policyResource).Namespace(karmadaNamespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating PropagationPolicy %s: %w", name, err)
	}
	return nil
}

// configMap is a ConfigMap as created at s.
func (s *side) configMap(name, version string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.namespace, Labels: s.labels},
		Data: map[string]string{"payload": payload, "version": version}}
}

// createConfigMaps creates the ConfigMaps at s, fedWriters at a time.
func (kb *karmadaBench) createConfigMaps(ctx context.Context, s *side, names []string, version string) error {
	return parallel(len(names), fedWriters, func(i int) error {
		if _, err := s.client.CoreV1().ConfigMaps(s.namespace).Create(ctx, s.configMap(names[i], version), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating ConfigMap %s at %s: %w", names[i], s.name, err)
		}
		return nil
	})
}

// deleteConfigMaps deletes the ConfigMaps at s.
func (kb *karmadaBench) deleteConfigMaps(ctx context.Context, s *side, names []string) error {
	return parallel(len(names), fedWriters, func(i int) error {
		err := s.client.CoreV1().ConfigMaps(s.namespace).Delete(ctx, names[i], metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting ConfigMap %s at %s: %w", names[i], s.name, err)
		}
		return nil
	})
}

// clear deletes the ConfigMaps at s and waits until no copy is left, when
// a scenario follows.
func (kb *karmadaBench) clear(ctx context.Context, s *side, names []string) {
	if !kb.more {
		return
	}
	start := time.Now()
	kb.check(kb.deleteConfigMaps(ctx, s, names))
	kb.check(poll.Until(ctx, kb.karmadaTimeout(len(names)), s.name+": every copy deleted", func(ctx context.Context) error {
		for _, c := range kb.clusters {
			list, err := kb.watchers[c].CoreV1().ConfigMaps(s.namespace).List(ctx, metav1.ListOptions{LabelSelector: s.selector, ResourceVersion: "0"})
			if err != nil {
				return err
			}
			if n := len(list.Items); n > 0 {
				return fmt.Errorf("%d left in %s", n, c)
			}
		}
		return nil
	}))
	fmt.Printf("karmada comparison: %s: %d ConfigMaps deleted everywhere after %s\n", s.name, len(names), time.Since(start).Round(time.Second))
}

// sum adds the usage of a plane's processes.
func sideSum(used map[string]usage) usage {
	var u usage
	for _, x := range used {
		u.CPUSeconds += x.CPUSeconds
		u.PeakRSSMiB += x.PeakRSSMiB
	}
	return u
}

// usageNote lists each process's usage, by name.
func sideUsageNote(used map[string]usage) string {
	var parts []string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range used {
			if !yield(k) {
				return
			}
		}
	}) {
		parts = append(parts, fmt.Sprintf("%s %.1f CPU s, peak %.0f MiB", name, used[name].CPUSeconds, used[name].PeakRSSMiB))
	}
	return fmt.Sprint(parts)
}

// printKarmada writes the comparison's table as Markdown.
func (r *report) printKarmada(w io.Writer) {
	fmt.Fprintf(w, "\n%s, %s\n\n", r.Date.UTC().Format("2006-01-02 15:04 MST"), r.Machine)
	fmt.Fprintf(w, "| scenario | N | figure | federation | Karmada | federation ÷ Karmada |\n|---|---|---|---|---|---|\n")
	for _, x := range r.Rows {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %.2f |\n", x.Scenario, x.Clusters, x.Figure, num(x.Federation), num(x.Reference), x.Ratio)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "\n- %s", n)
	}
	fmt.Fprintln(w)
}
