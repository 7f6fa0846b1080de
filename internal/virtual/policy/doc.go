// Package policy holds the decisions that keep a virtual cluster's tenant
// inside its host namespace (docs/security.md, the `policies:` section of
// the configuration file): the Pod Security Standards check of pods, which
// tolerations and node name a host pod may carry, and which addresses
// tenant-written Endpoints may point at. It is pure: no clients, no I/O;
// the resource syncers (internal/virtual/resources) call it with what they
// read and act on its answers.
package policy
