//go:build tools

// Package tools pins the etcd server that the member-cluster test environment runs.
package tools

import _ "go.etcd.io/etcd/server/v3"
