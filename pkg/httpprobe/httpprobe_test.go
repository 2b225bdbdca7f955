package httpprobe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGetOK(t *testing.T) {
	ok := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer ok.Close()
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer sick.Close()

	assert.NoError(t, GetOK(context.Background(), ok.URL+"/healthz"), "a self-signed loopback server is accepted")
	assert.ErrorContains(t, GetOK(context.Background(), sick.URL+"/healthz"), "503")
	assert.Error(t, GetOK(context.Background(), "http://127.0.0.1:1/healthz"))
}

func TestGetOKAsSendsTheToken(t *testing.T) {
	guarded := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cr3t" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer guarded.Close()
	assert.NoError(t, GetOKAs(context.Background(), guarded.URL+"/readyz", "s3cr3t"))
	assert.ErrorContains(t, GetOK(context.Background(), guarded.URL+"/readyz"), "401")
}
