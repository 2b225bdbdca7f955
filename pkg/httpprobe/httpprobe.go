// Package httpprobe checks the health endpoints of local programs
// (/healthz, /ready, etcd's /health) over HTTP or HTTPS.
package httpprobe

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"time"
)

// client trusts any certificate: the programs probed run on loopback with
// self-signed serving certificates, and only their answer matters.
var client = &http.Client{Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback health probe
}}

// GetOK fails unless GET url answers 200 within two seconds.
func GetOK(ctx context.Context, url string) error {
	return GetOKAs(ctx, url, "")
}

// GetOKAs is GetOK with a bearer token, for servers that let no anonymous
// caller see their health; no token sends none.
func GetOKAs(ctx context.Context, url, token string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return GetOKWith(ctx, client, url, token)
}

// GetOKWith fails unless GET url with c (and the bearer token, if any)
// answers 200, for a caller that verifies the server or picks its
// connections itself; ctx bounds it.
func GetOKWith(ctx context.Context, c *http.Client, url, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
