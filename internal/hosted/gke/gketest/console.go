package gketest

import (
	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/proto"
)

// ImportCluster stores a cluster that already exists, RUNNING at once
// (its node pools too), as if made outside the code under test (in the
// Cloud Console), in project and location (a region such as "us-central1"
// or a zone such as "us-central1-a"). c is a Cluster as a create request
// carries it; it gets the same defaults and validation as
// clusters.create, and c itself is not changed or kept. It returns an
// *APIError when the create request would fail: 409 ALREADY_EXISTS if the
// name is taken, 400 INVALID_ARGUMENT if c is invalid.
func (s *Server) ImportCluster(project, location string, c *containerpb.Cluster) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.settle()
	cl, e := s.newCluster(project, location, c, now, containerpb.Cluster_RUNNING)
	if e != nil {
		return e
	}
	s.clusters[clusterKey(project, location, cl.name)] = cl
	return nil
}

// Cluster returns a deep copy of the named cluster as clusters.get answers
// it now (with its nodePools), after finishing the operations that are
// due; ok is false if there is no such cluster (also once its deletion is
// DONE).
func (s *Server) Cluster(project, location, name string) (c *containerpb.Cluster, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	cl := s.clusters[clusterKey(project, location, name)]
	if cl == nil {
		return nil, false
	}
	return cl.render(), true
}

// NodePool returns a deep copy of the named node pool of a cluster as
// nodePools.get answers it now (its size in initialNodeCount, see the
// package documentation), after finishing the operations that are due;
// ok is false if there is no such cluster or pool.
func (s *Server) NodePool(project, location, clusterName, name string) (p *containerpb.NodePool, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	_, np, e := s.findPool(project, location, clusterName, name)
	if e != nil {
		return nil, false
	}
	return proto.Clone(np.pb).(*containerpb.NodePool), true
}

// Operation returns a deep copy of the named operation (e.g.
// "operation-1767323045000-1a2b3c4d") in project and location ("-": any
// location) as operations.get answers it now, after finishing the
// operations that are due; ok is false if there is none. Operations stay
// after they are DONE, also when their cluster is gone.
func (s *Server) Operation(project, location, name string) (op *containerpb.Operation, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	o, e := s.findOperation(project, location, name)
	if e != nil {
		return nil, false
	}
	return proto.Clone(o.pb).(*containerpb.Operation), true
}
