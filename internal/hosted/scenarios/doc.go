// Package scenarios holds the hosted-cluster scenario table: one list of
// behaviours the engine promises — import, create, a user edit pushed, an
// outside change adopted, crossing edits held as a Conflict, rapid edits
// (the last value wins), pools added and removed, a refused push, a
// transient error retried, deletion of a created and of an imported
// cluster — run against every provider (EKS, AKS, GKE) through its emulator,
// the real management controller and operator, and a real kube-apiserver.
// A provider joins the table with an adapter (cloud in the tests) that
// starts its emulator and makes changes in the cloud as a person in the
// console would. It has no code outside its tests.
package scenarios
