// Package eks is clustersync's EKS operator: it reconciles EKSClusterConfig
// objects against Amazon EKS (or the emulator in ekstest) with
// aws-sdk-go-v2, following the phases and the one-change-per-pass update
// order of Rancher's eks-operator (https://github.com/rancher/eks-operator).
// Pure decisions (version steps, the
// next update) live in their own files, the cloud calls behind narrow
// interfaces.
package eks
