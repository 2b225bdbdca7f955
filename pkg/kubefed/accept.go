package kubefed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certificatesclient "k8s.io/client-go/kubernetes/typed/certificates/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/agentcerts"
)

// acceptOptions are the options of `kubefed accept`.
type acceptOptions struct {
	*globalFlags
	cluster, federation string
	now                 func() time.Time
}

func newAcceptCommand(g *globalFlags) *cobra.Command {
	o := &acceptOptions{globalFlags: g, now: time.Now}
	cmd := &cobra.Command{
		Use:   "accept CLUSTER_NAME --context=FEDERATION",
		Short: "Accept a member cluster's agent: approve its pending certificate request",
		Long: `Accept the agent of member cluster CLUSTER_NAME, registered with a bootstrap token
of kubefed token create without --auto-accept: approve the pending certificate
request of CLUSTER_NAME's agent made with such a token, by the same rules the
controller manager applies (the request asks for exactly the agent's client
certificate, system:federation:agent:CLUSTER_NAME, with an unexpired token labelled for
CLUSTER_NAME), and delete the token, which is good for one certificate. When a
token has several pending requests (an agent that started again asks again), the
newest is approved and the older ones are denied.`,
		Example: `  kubefed accept edge1 --context=fed`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cluster = args[0]
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.federation, "context", "", "kubeconfig context of the federation")
	return cmd
}

func (o *acceptOptions) run(ctx context.Context, out io.Writer) error {
	fed, err := o.globalFlags.federation(ctx, o.federation)
	if err != nil {
		return err
	}
	csrs := fed.kube.CertificatesV1().CertificateSigningRequests()
	list, err := csrs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the certificate signing requests: %w", err)
	}
	tokens := func(name string) (*corev1.Secret, error) {
		return fed.kube.CoreV1().Secrets(federationv1beta1.SystemNamespace).Get(ctx, name, metav1.GetOptions{})
	}
	// A token is good for one certificate: of its pending requests the
	// newest is approved (an agent that started again asked again) and
	// the older ones are denied, so no second key gets the cluster's
	// identity from the same token.
	var refused []string
	byToken := map[string][]*certificatesv1.CertificateSigningRequest{}
	for i := range list.Items {
		csr := &list.Items[i]
		if csr.Spec.SignerName != agentcerts.SignerName || !agentcerts.Pending(csr) {
			continue
		}
		v := agentcerts.Judge(csr, tokens, o.now())
		if v.Cluster != o.cluster || v.Action == agentcerts.Ignore {
			continue
		}
		if (v.Action != agentcerts.Wait && v.Action != agentcerts.Approve) || v.TokenSecret == "" {
			refused = append(refused, fmt.Sprintf("%s: %s", csr.Name, v.Message))
			continue
		}
		byToken[v.TokenSecret] = append(byToken[v.TokenSecret], csr)
	}
	var accepted, superseded []string
	for token, pending := range byToken {
		slices.SortFunc(pending, func(a, b *certificatesv1.CertificateSigningRequest) int {
			if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
				return c
			}
			return strings.Compare(a.Name, b.Name)
		})
		newest := pending[len(pending)-1]
		for _, csr := range pending[:len(pending)-1] {
			if err := o.decide(ctx, csrs, csr, certificatesv1.CertificateDenied, "Superseded",
				fmt.Sprintf("a newer request of the same bootstrap token, %s, was accepted", newest.Name)); err != nil {
				return err
			}
			superseded = append(superseded, csr.Name)
		}
		if err := o.decide(ctx, csrs, newest, certificatesv1.CertificateApproved, "AcceptedByAdmin",
			fmt.Sprintf("cluster %q's agent accepted with kubefed accept", o.cluster)); err != nil {
			return err
		}
		accepted = append(accepted, newest.Name)
		if err := agentcerts.DeleteToken(ctx, fed.kube, token); err != nil {
			return err
		}
	}
	if len(accepted) == 0 {
		msg := fmt.Sprintf("cluster %q has no pending certificate request to accept: has its agent run kubefed register with a token of kubefed token create %s (without --auto-accept)?", o.cluster, o.cluster)
		if len(refused) > 0 {
			msg += " Requests that cannot be accepted: " + strings.Join(refused, "; ")
		}
		return errors.New(msg)
	}
	slices.Sort(accepted)
	fmt.Fprintf(out, "Accepted cluster %q: approved certificate request %s; the agent's certificate is issued by the controller manager\n",
		o.cluster, strings.Join(accepted, ", "))
	if len(superseded) > 0 {
		slices.Sort(superseded)
		fmt.Fprintf(out, "Denied the older request(s) of the same token: %s\n", strings.Join(superseded, ", "))
	}
	return nil
}

// decide approves or denies a certificate request.
func (o *acceptOptions) decide(ctx context.Context, csrs certificatesclient.CertificateSigningRequestInterface, csr *certificatesv1.CertificateSigningRequest,
	decision certificatesv1.RequestConditionType, reason, message string) error {
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: decision, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastUpdateTime: metav1.NewTime(o.now()),
	})
	if _, err := csrs.UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("deciding certificate request %s of cluster %q: %w", csr.Name, o.cluster, err)
	}
	return nil
}
