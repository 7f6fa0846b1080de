//go:build tools

// Package etcd pins the etcd server built by hack/build-binaries.sh.
package etcd

import _ "go.etcd.io/etcd/server/v3"
