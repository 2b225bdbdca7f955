package clusterhealth

import (
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

// secret is what a hostile member puts in its answers, hoping to see it in
// the Cluster's status or events.
const secret = "SECRET-d6f1c0a8"

// hostileMember serves handler over TLS on 127.0.0.1 and returns a config
// that trusts it.
func hostileMember(t *testing.T, handler http.HandlerFunc) *rest.Config {
	t.Helper()
	srv := httptest.NewTLSServer(handler)
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return &rest.Config{Host: srv.URL, BearerToken: "t", TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
}

// nodesList is a node list answer with the given labels on one node each.
func nodesList(labels ...string) string {
	items := ""
	for i, l := range labels {
		if i > 0 {
			items += ","
		}
		items += fmt.Sprintf(`{"metadata":{"name":"n%d","labels":{%s}}}`, i, l)
	}
	return `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{},"items":[` + items + `]}`
}

// member answers /readyz with readyz and the node list with nodes.
func member(readyzCode int, readyz string, nodesCode int, nodes string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/readyz":
			w.WriteHeader(readyzCode)
			fmt.Fprint(w, readyz)
		case "/api/v1/nodes":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(nodesCode)
			fmt.Fprint(w, nodes)
		default:
			http.NotFound(w, r)
		}
	}
}

func statusBody(code int) string {
	return fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"%s","reason":"%s","code":%d,
"details":{"causes":[{"message":"%s"}]}}`, secret, secret, code, secret)
}

// TestProbeNeverQuotesTheAnswer plays a member that puts a secret in every
// answer: the observation says what failed, in words of our own.
func TestProbeNeverQuotesTheAnswer(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		handler http.HandlerFunc
		verdict Verdict
		want    string
	}{
		{name: "readyz fails with a body", handler: member(http.StatusInternalServerError, "[-]etcd failed: "+secret, 0, ""),
			verdict: NotReady, want: "/readyz answered HTTP 500 (Internal Server Error)"},
		{name: "readyz refuses with a Status", handler: member(http.StatusUnauthorized, statusBody(401), 0, ""),
			verdict: NotReady, want: "/readyz answered HTTP 401 (Unauthorized)"},
		{name: "readyz answers 200 but not ok", handler: member(http.StatusOK, secret, 0, ""),
			verdict: NotReady, want: "/readyz answered HTTP 200 without ok"},
		{name: "readyz answers an invalid code", handler: member(999, secret, 0, ""),
			verdict: NotReady, want: "/readyz answered an invalid HTTP status"},
		{name: "nodes forbidden with a Status", handler: member(http.StatusOK, "ok", http.StatusForbidden, statusBody(403)),
			verdict: Ready, want: "reading node topology: answered HTTP 403 (Forbidden)"},
		{name: "nodes answer garbage", handler: member(http.StatusOK, "ok", http.StatusOK, "{"+secret),
			verdict: Ready, want: "reading node topology: "},
		{name: "malformed HTTP answer", handler: func(w http.ResponseWriter, _ *http.Request) {
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			fmt.Fprintf(buf, "%s garbage\r\n\r\n", secret)
			buf.Flush()
		}, verdict: Offline, want: "API server unreachable: the request failed"},
		{name: "redirect to a closed port", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://127.0.0.1:"+closedPort(t)+"/"+secret, http.StatusFound)
		}, verdict: Offline, want: "API server unreachable: connection refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obs := Probe(ctx, hostileMember(t, tc.handler), 5*time.Second)
			assert.Equal(t, tc.verdict, VerdictOf(obs))
			assert.Contains(t, obs.Message, tc.want)
			assert.NotContains(t, obs.Message, secret)
			assert.NotContains(t, fmt.Sprint(obs.Zones, obs.Region), secret)
		})
	}
}

// TestProbeSaysWhatFailed checks the words used for the usual failures.
func TestProbeSaysWhatFailed(t *testing.T) {
	ctx := context.Background()
	plain := httptest.NewServer(member(http.StatusOK, "ok", 0, ""))
	t.Cleanup(plain.Close)
	cases := []struct {
		name   string
		config func(t *testing.T) *rest.Config
		want   string
	}{
		{name: "connection refused", config: func(t *testing.T) *rest.Config {
			return &rest.Config{Host: "https://127.0.0.1:" + closedPort(t)}
		}, want: "API server unreachable: connection refused"},
		{name: "unknown CA", config: func(t *testing.T) *rest.Config {
			cfg := hostileMember(t, member(http.StatusOK, "ok", 0, ""))
			cfg.CAData = nil
			return cfg
		}, want: "API server unreachable: its certificate is not signed by the CA of the credentials Secret"},
		{name: "plain HTTP", config: func(*testing.T) *rest.Config {
			return &rest.Config{Host: "https://" + plain.Listener.Addr().String()}
		}, want: "API server unreachable: it answered plain HTTP, not HTTPS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obs := Probe(ctx, tc.config(t), 5*time.Second)
			assert.Equal(t, Offline, VerdictOf(obs))
			assert.Equal(t, tc.want, obs.Message)
		})
	}
}

// TestProbeTopologyKeepsDNSLabelsOnly: zones and region become labels of
// DNS names, and the Cluster's status refuses anything else.
func TestProbeTopologyKeepsDNSLabelsOnly(t *testing.T) {
	const zone, region = `"topology.kubernetes.io/zone"`, `"topology.kubernetes.io/region"`
	nodes := nodesList(
		zone+`:"us-east1-b",`+region+`:"us-east1"`,
		zone+`:"US-East1-C",`+region+`:"us-east1"`,
		zone+`:"victim.default",`+region+`:"a/b"`,
		zone+`:"a/b",`+region+`:"a/b"`,
		zone+`:"*",`+region+`:"a/b"`,
		zone+`:"ok-but-legacy-wins","failure-domain.beta.kubernetes.io/zone":"z"`,
	)
	obs := Probe(context.Background(), hostileMember(t, member(http.StatusOK, "ok", http.StatusOK, nodes)), 5*time.Second)
	require.Empty(t, obs.Message)
	assert.Equal(t, []string{"ok-but-legacy-wins", "us-east1-b", "us-east1-c"}, obs.Zones, "upper case is lowered, the rest skipped")
	assert.Equal(t, "us-east1", obs.Region, "a region that is not a label never wins, however many nodes carry it")
}

func TestProbeBoundsZones(t *testing.T) {
	var labels []string
	for i := range 100 {
		labels = append(labels, fmt.Sprintf(`"topology.kubernetes.io/zone":"z%03d"`, i))
	}
	obs := Probe(context.Background(), hostileMember(t, member(http.StatusOK, "ok", http.StatusOK, nodesList(labels...))), 5*time.Second)
	assert.Len(t, obs.Zones, 64)
	assert.Equal(t, "z000", obs.Zones[0])
}

// closedPort returns a port on 127.0.0.1 where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, port, err := net.SplitHostPort(l.Addr().String())
	require.NoError(t, err)
	require.NoError(t, l.Close())
	return port
}
