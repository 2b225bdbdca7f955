package faults_test

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/poll"
)

// verifier reads the federation and its members in one pass per check:
// a list per type and namespace at the federation, a label-selected list
// per type, member and namespace.
type verifier struct {
	fed     kubernetes.Interface
	members map[string]kubernetes.Interface
	// fedName is the value of the federation label on its copies.
	fedName string
}

// expectation is what a case's namespace must come to.
type expectation struct {
	ns string
	// want is what the writer had acknowledged; called on each pass.
	want func() state
	// gone: the namespace was deleted, and nothing of it may be left at
	// the federation or in any member.
	gone bool
}

// pass reads everything once and judges it.
func (v *verifier) pass(ctx context.Context, e expectation) (verdict, error) {
	fed, terminating, err := v.federationState(ctx, e.ns)
	if err != nil {
		return verdict{}, err
	}
	members := map[string]state{}
	for name, client := range v.members {
		if members[name], err = v.memberState(ctx, client, e.ns); err != nil {
			return verdict{}, fmt.Errorf("reading cluster %s: %w", name, err)
		}
	}
	want := newState()
	if !e.gone {
		want = e.want()
	}
	verdict := compare(want, fed, members)
	for _, name := range terminating {
		verdict.Stuck++
		verdict.example("%s has a deletionTimestamp at the federation", name)
	}
	if err := v.checkNamespace(ctx, e, &verdict); err != nil {
		return verdict, err
	}
	return verdict, v.checkTombstones(ctx, &verdict)
}

// federationState lists a namespace's ConfigMaps and Deployments at the
// federation, and names those being deleted.
func (v *verifier) federationState(ctx context.Context, ns string) (state, []string, error) {
	s := newState()
	var terminating []string
	cms, err := v.fed.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return s, nil, fmt.Errorf("listing configmaps in %s at the federation: %w", ns, err)
	}
	for _, cm := range cms.Items {
		s.ConfigMaps[cm.Name] = cm.Data
		if cm.DeletionTimestamp != nil {
			terminating = append(terminating, "configmap "+cm.Name)
		}
	}
	deps, err := v.fed.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return s, nil, fmt.Errorf("listing deployments in %s at the federation: %w", ns, err)
	}
	for i := range deps.Items {
		d := &deps.Items[i]
		s.Deployments[d.Name] = stateOf(d)
		if d.DeletionTimestamp != nil {
			terminating = append(terminating, "deployment "+d.Name)
		}
	}
	return s, terminating, nil
}

// memberState lists this federation's copies in a member's namespace.
func (v *verifier) memberState(ctx context.Context, client kubernetes.Interface, ns string) (state, error) {
	s := newState()
	opts := metav1.ListOptions{LabelSelector: federationv1beta1.FederationLabel + "=" + v.fedName}
	cms, err := client.CoreV1().ConfigMaps(ns).List(ctx, opts)
	if err != nil {
		return s, err
	}
	for _, cm := range cms.Items {
		s.ConfigMaps[cm.Name] = cm.Data
	}
	deps, err := client.AppsV1().Deployments(ns).List(ctx, opts)
	if err != nil {
		return s, err
	}
	for i := range deps.Items {
		s.Deployments[deps.Items[i].Name] = stateOf(&deps.Items[i])
	}
	return s, nil
}

// checkNamespace checks the namespace itself: there and labelled in every
// member, or gone everywhere.
func (v *verifier) checkNamespace(ctx context.Context, e expectation, verdict *verdict) error {
	ns, err := v.fed.CoreV1().Namespaces().Get(ctx, e.ns, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if !e.gone {
			verdict.Lost++
			verdict.example("namespace %s is gone from the federation", e.ns)
		}
	case err != nil:
		return fmt.Errorf("reading namespace %s at the federation: %w", e.ns, err)
	case ns.DeletionTimestamp != nil:
		verdict.Stuck++
		verdict.example("namespace %s is still terminating at the federation (finalizers %v)", e.ns, ns.Spec.Finalizers)
	case e.gone:
		verdict.Duplicated++
		verdict.example("namespace %s was deleted but the federation holds it", e.ns)
	}
	for _, name := range sortedKeys(v.members) {
		memberNS, err := v.members[name].CoreV1().Namespaces().Get(ctx, e.ns, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			if !e.gone {
				verdict.Lost++
				verdict.example("namespace %s: no copy in %s", e.ns, name)
			}
		case err != nil:
			return fmt.Errorf("reading namespace %s in cluster %s: %w", e.ns, name, err)
		case e.gone:
			verdict.Duplicated++
			verdict.example("namespace %s is still in %s (phase %s)", e.ns, name, memberNS.Status.Phase)
		case memberNS.Labels[federationv1beta1.FederationLabel] != v.fedName:
			verdict.Lost++
			verdict.example("namespace %s in %s is not labelled as this federation's copy", e.ns, name)
		}
	}
	return nil
}

// checkTombstones counts the deletions still under way, in any namespace:
// every case before this one was verified without any.
func (v *verifier) checkTombstones(ctx context.Context, verdict *verdict) error {
	list, err := v.fed.CoreV1().ConfigMaps(federationv1beta1.SystemNamespace).List(ctx,
		metav1.ListOptions{LabelSelector: federationv1beta1.TombstoneLabel})
	if err != nil {
		return fmt.Errorf("listing tombstones at the federation: %w", err)
	}
	for _, t := range list.Items {
		verdict.Stuck++
		verdict.example("tombstone of %s %s/%s pending", t.Labels[federationv1beta1.TombstoneLabel], t.Data["namespace"], t.Data["name"])
	}
	return nil
}

// verifyInterval spaces the verifier's passes: each lists a few thousand
// objects.
const verifyInterval = time.Second

// converge polls until a pass finds nothing wrong, or timeout. It returns
// the last verdict and when it was reached; the error says what was still
// wrong.
func (v *verifier) converge(e expectation, timeout time.Duration) (verdict, time.Time, error) {
	var last verdict
	var at time.Time
	err := poll.UntilEvery(context.Background(), timeout, verifyInterval, "namespace "+e.ns+" to converge", func(ctx context.Context) error {
		pass, err := v.pass(ctx, e)
		if err != nil {
			return err
		}
		last, at = pass, time.Now()
		if !pass.ok() {
			return fmt.Errorf("%s", pass)
		}
		return nil
	})
	return last, at, err
}
