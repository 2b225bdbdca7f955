package kubefed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/pager"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/ownership"
)

// strayOptions are the flags of kubefed strays.
type strayOptions struct {
	g          *globalFlags
	context    string
	federation string
	clean      bool
}

func newStraysCommand(g *globalFlags) *cobra.Command {
	o := &strayOptions{g: g}
	cmd := &cobra.Command{
		Use:   "strays --context=FEDERATION [--clean]",
		Short: "List member copies of the federation whose federated object is gone, and clean them on request",
		Long: `List, in every joined cluster, the objects labelled as copies of this
federation whose federated object does not exist (after restoring an older
backup, say), of the built-in types and of the custom resources of the
federation's CRDs. The controller manager never deletes them; --clean deletes the
listed ones, checking each at the federation again right before. Stray
namespaces and adopted copies (the cluster's own objects before the
federation took them over) are listed but never deleted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&o.context, "context", "", "kubeconfig context of the federation (required)")
	cmd.Flags().StringVar(&o.federation, "federation-name", "", "name of the federation, as its copies are labelled (default: the context's name)")
	cmd.Flags().BoolVar(&o.clean, "clean", false, "delete the stray copies listed")
	return cmd
}

func (o *strayOptions) validate() error {
	if o.context == "" {
		return errors.New("--context naming the federation's kubeconfig context is required")
	}
	if o.federation == "" {
		o.federation = o.context
	}
	return nil
}

// neverPropagated are the namespaces the controller manager never writes
// to by default; nothing in them is a copy.
var neverPropagated = federatedtypes.NeverPropagatedNamespaces(federatedtypes.DefaultNeverPropagatedNamespaces)

// stray is a member copy whose federated object is gone.
type stray struct {
	cluster string
	typ     *federatedtypes.Type
	obj     *unstructured.Unstructured
	// member reaches the cluster with the federation's own credentials.
	member dynamic.Interface
}

// strayFinder reads the federation and its members.
type strayFinder struct {
	fed dynamic.Interface
	// fedConfig reaches agent members through the federation's proxy.
	fedConfig *rest.Config
	name      string
	uid       string
	// deleting are the objects whose deletion's tombstone is pending: their
	// copies are being deleted, not strays (strays_tombstones.go).
	deleting sets.Set[string]
	// federated are the keys of each type's federated objects, listed
	// once (not a read per copy: a member holds thousands).
	federated map[*federatedtypes.Type]sets.Set[string]
	// types are the built-in federated types and the custom resources'.
	types []*federatedtypes.Type
}

func (o *strayOptions) run(ctx context.Context, out, errOut io.Writer) error {
	fc, err := o.g.federation(ctx, o.context)
	if err != nil {
		return err
	}
	cfg, err := o.g.restConfigFor(o.context)
	if err != nil {
		return err
	}
	f := &strayFinder{name: o.federation, fedConfig: cfg}
	if f.fed, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	// The federation's identity is its federation-system namespace's UID.
	ns, err := fc.kube.CoreV1().Namespaces().Get(ctx, federationv1beta1.SystemNamespace, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the federation's identity (namespace %s): %w", federationv1beta1.SystemNamespace, err)
	}
	f.uid = string(ns.UID)
	if f.deleting, err = pendingDeletions(ctx, fc.kube); err != nil {
		return err
	}
	crs, err := customResourceTypes(ctx, f.fed)
	if err != nil {
		return err
	}
	f.types = append(append(f.types, federatedtypes.All...), crs...)
	clusters, err := fc.fed.FederationV1beta1().Clusters().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the federation's clusters: %w", err)
	}
	var strays []stray
	var errs []error
	for i := range clusters.Items {
		cl := &clusters.Items[i]
		found, err := f.inCluster(ctx, fc.kube, cl)
		if err != nil {
			errs = append(errs, err)
			fmt.Fprintf(errOut, "warning: %v\n", err)
		}
		strays = append(strays, found...)
	}
	printStrays(out, strays)
	if o.clean {
		errs = append(errs, f.clean(ctx, out, strays))
	}
	return errors.Join(errs...)
}

// inCluster finds the strays of one joined cluster, reaching it as the
// controller manager does: with the Secret its secretRef names, or through
// its agent's tunnel.
func (f *strayFinder) inCluster(ctx context.Context, kube kubernetes.Interface, cl *federationv1beta1.Cluster) ([]stray, error) {
	cfg, err := f.memberConfig(ctx, kube, cl)
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "kubefed"
	member, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	selector := labels.SelectorFromSet(labels.Set{federationv1beta1.FederationLabel: f.name}).String()
	var out []stray
	var errs []error
	for _, t := range f.types {
		list, err := member.Resource(t.Resource).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			// A member without the API (or our right to it) has no copies.
			if !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
				errs = append(errs, fmt.Errorf("cluster %s: listing %s: %w", cl.Name, t.Name, err))
			}
			continue
		}
		for i := range list.Items {
			obj := &list.Items[i]
			// The federation's own objects in a member (join's token in
			// federation-system) carry our label but are no copies.
			if _, never := federatedtypes.NeverPropagatedIn(neverPropagated, t.Resource.GroupResource(), obj.GetNamespace(), obj.GetName()); never || !ownership.OurCopy(obj, f.name, f.uid) {
				continue
			}
			gone, err := f.listedGone(ctx, t, obj)
			if err != nil {
				errs = append(errs, fmt.Errorf("cluster %s: %s %s: %w", cl.Name, t.Kind, strayKey(obj), err))
				continue
			}
			if gone && !f.beingDeleted(t, obj) {
				out = append(out, stray{cluster: cl.Name, typ: t, obj: obj, member: member})
			}
		}
	}
	return out, errors.Join(errs...)
}

// memberConfig is how kubefed reaches cl: through the federation's proxy
// to its agent's tunnel, with the user's own federation credential, or
// with the Secret its secretRef names.
func (f *strayFinder) memberConfig(ctx context.Context, kube kubernetes.Interface, cl *federationv1beta1.Cluster) (*rest.Config, error) {
	if cl.Spec.Connection == federationv1beta1.ConnectionAgent {
		return membercluster.AgentRESTConfig(f.fedConfig, cl)
	}
	if cl.Spec.SecretRef == nil || cl.Spec.SecretRef.Name == "" {
		return nil, fmt.Errorf("cluster %s: no secretRef, skipped", cl.Name)
	}
	secret, err := kube.CoreV1().Secrets(federationv1beta1.SystemNamespace).Get(ctx, cl.Spec.SecretRef.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: reading its credentials: %w", cl.Name, err)
	}
	return membercluster.RESTConfig(cl, secret)
}

// listedGone says whether the federated object of a copy is missing from
// the federation's objects of its type, listed at the first copy of the
// type.
func (f *strayFinder) listedGone(ctx context.Context, t *federatedtypes.Type, obj *unstructured.Unstructured) (bool, error) {
	keys, ok := f.federated[t]
	if !ok {
		keys = sets.New[string]()
		p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return f.fed.Resource(t.Resource).List(ctx, opts)
		})
		err := p.EachListItem(ctx, metav1.ListOptions{}, func(o runtime.Object) error {
			if m, err := meta.Accessor(o); err == nil {
				keys.Insert(m.GetNamespace() + "/" + m.GetName())
			}
			return nil
		})
		if err != nil {
			return false, fmt.Errorf("listing the federation's %s: %w", t.Name, err)
		}
		if f.federated == nil {
			f.federated = map[*federatedtypes.Type]sets.Set[string]{}
		}
		f.federated[t] = keys
	}
	return !keys.Has(obj.GetNamespace() + "/" + obj.GetName()), nil
}

// federatedGone reads the federated object of a copy at the federation,
// right before --clean deletes the copy.
func (f *strayFinder) federatedGone(ctx context.Context, t *federatedtypes.Type, obj *unstructured.Unstructured) (bool, error) {
	_, err := f.fed.Resource(t.Resource).Namespace(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// clean deletes the strays, each only if its federated object is still
// gone and the member object is still the very one listed (same UID and
// resourceVersion, so still labelled ours). Namespaces are left.
func (f *strayFinder) clean(ctx context.Context, out io.Writer, strays []stray) error {
	var errs []error
	for _, s := range strays {
		what := fmt.Sprintf("%s %s in cluster %s", s.typ.Kind, strayKey(s.obj), s.cluster)
		if s.typ.Resource == membercluster.NamespacesResource {
			fmt.Fprintf(out, "left %s: deleting a namespace deletes everything in it; delete it yourself if it holds nothing of the cluster's own\n", what)
			continue
		}
		if s.obj.GetAnnotations()[federationv1beta1.AdoptedAnnotation] == "true" {
			fmt.Fprintf(out, "left %s: it was the cluster's own before the federation adopted it\n", what)
			continue
		}
		gone, err := f.federatedGone(ctx, s.typ, s.obj)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
			continue
		}
		if !gone {
			fmt.Fprintf(out, "kept %s: its federated object exists again\n", what)
			continue
		}
		uid, rv := s.obj.GetUID(), s.obj.GetResourceVersion()
		err = s.member.Resource(s.typ.Resource).Namespace(s.obj.GetNamespace()).Delete(ctx, s.obj.GetName(),
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
		switch {
		case err == nil:
			fmt.Fprintf(out, "deleted %s\n", what)
		case apierrors.IsNotFound(err):
			fmt.Fprintf(out, "%s is already gone\n", what)
		case apierrors.IsConflict(err):
			fmt.Fprintf(out, "kept %s: it changed since it was listed; run again\n", what)
		default:
			errs = append(errs, fmt.Errorf("deleting %s: %w", what, err))
		}
	}
	return errors.Join(errs...)
}

// printStrays prints the strays as a table, or that there are none.
func printStrays(out io.Writer, strays []stray) {
	if len(strays) == 0 {
		fmt.Fprintln(out, "No stray copies.")
		return
	}
	sort.SliceStable(strays, func(i, j int) bool {
		a, b := strays[i], strays[j]
		if a.cluster != b.cluster {
			return a.cluster < b.cluster
		}
		if a.typ.Kind != b.typ.Kind {
			return a.typ.Kind < b.typ.Kind
		}
		return strayKey(a.obj) < strayKey(b.obj)
	})
	w := tabwriter.NewWriter(out, 0, 4, 3, ' ', 0)
	fmt.Fprintln(w, "CLUSTER\tKIND\tNAMESPACE\tNAME\tAGE")
	for _, s := range strays {
		age := duration.HumanDuration(time.Since(s.obj.GetCreationTimestamp().Time))
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", s.cluster, s.typ.Kind, s.obj.GetNamespace(), s.obj.GetName(), age)
	}
	w.Flush()
}

func strayKey(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
