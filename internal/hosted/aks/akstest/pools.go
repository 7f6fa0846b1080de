package akstest

import (
	"net/http"
	"strings"
	"time"
)

// putPool answers agentPools.createOrUpdate: 201 Creating for a new pool
// (mode User unless given), 200 Upgrading, Scaling or Updating for an
// existing one, whose body is merged into its properties. The cluster's
// own provisioningState does not change.
func (s *Server) putPool(r *req, now time.Time) (*reply, *APIError) {
	body, e := decodeBody(r.body)
	if e != nil {
		return nil, e
	}
	var shape struct {
		Properties PoolSnapshot `json:"properties"`
	}
	if e := checkShape(body, &shape); e != nil {
		return nil, e
	}
	c, e := s.findCluster(r)
	if e != nil {
		return nil, e
	}
	p := c.pool(r.pool)
	etag := ""
	if p != nil {
		etag = p.etag
	}
	what := "agent pool '" + r.pool + "'"
	if e := checkPreconditions(r.header, p != nil, etag, what); e != nil {
		return nil, e
	}
	if e := c.busy(); e != nil {
		return nil, e
	}
	props := copyObj(child(body, "properties"))
	strip(props, readOnlyPool())
	cp := str(child(c.doc, "properties"), "kubernetesVersion")
	if p == nil {
		name := r.pool
		fillPoolDefaults(props, "User", cp)
		if e := validatePool(name, props, true); e != nil {
			return nil, e
		}
		if e := checkPoolVersion(name, props, cp); e != nil {
			return nil, e
		}
		op := s.newOperation(c.sub, c.location(), c.id()+"/agentPools/"+name, StateCreating, now, s.opts.CreateDelay, true)
		np := &pool{name: name, props: props, state: StateCreating, etag: newETag(), op: op}
		c.pools = append(c.pools, np)
		c.etag = newETag()
		op.finish = func(ok bool) { c.finish(op, ok, nil, nil) }
		return &reply{status: http.StatusCreated, header: s.lroHeaders(r, op), body: s.renderPool(c, np)}, nil
	}
	next := copyObj(p.props)
	oldCount, _ := num(p.props, "count")
	mergeInto(next, props)
	if boolOf(next, "enableAutoScaling") {
		next["count"] = clampCount(next, oldCount)
	}
	fillPoolDefaults(next, "User", cp)
	if e := validatePool(p.name, next, false); e != nil {
		return nil, e
	}
	if e := validatePoolChange(p.name, p.props, next); e != nil {
		return nil, e
	}
	if e := checkPoolVersion(p.name, next, cp); e != nil {
		return nil, e
	}
	if !strings.EqualFold(str(next, "mode"), "System") && !hasSystemPool(c.pools, p) {
		return nil, errNotAllowed("Operation is not allowed: agent pool '%s' is the last agent pool of mode System; add another System pool first.", p.name)
	}
	state := StateUpdating
	if !sameJSON(p.props, next) {
		state = poolState(p.props, next)
	}
	op := s.newOperation(c.sub, c.location(), c.id()+"/agentPools/"+p.name, state, now, s.opts.UpdateDelay, true)
	p.state, p.op, p.etag = state, op, newETag()
	c.etag = newETag()
	op.finish = func(ok bool) { c.finish(op, ok, nil, map[*pool]obj{p: next}) }
	pending := &pool{name: p.name, props: next, state: state, etag: p.etag}
	return &reply{status: http.StatusOK, header: s.lroHeaders(r, op), body: s.renderPool(c, pending)}, nil
}

// deletePool answers agentPools.delete: 202 and Deleting until DeleteDelay
// has passed, 204 if absent, 400 OperationNotAllowed for the last System
// pool; repeating the delete of a Deleting pool answers 202 with the same
// operation.
func (s *Server) deletePool(r *req, now time.Time) (*reply, *APIError) {
	c, e := s.findCluster(r)
	if e != nil {
		return nil, e
	}
	p := c.pool(r.pool)
	what := "agent pool '" + r.pool + "'"
	if p == nil {
		if e := checkPreconditions(r.header, false, "", what); e != nil {
			return nil, e
		}
		return &reply{status: http.StatusNoContent}, nil
	}
	if e := checkPreconditions(r.header, true, p.etag, what); e != nil {
		return nil, e
	}
	if p.state == StateDeleting && p.op != nil {
		return &reply{status: http.StatusAccepted, header: s.lroHeaders(r, p.op)}, nil
	}
	if e := c.busy(); e != nil {
		return nil, e
	}
	if strings.EqualFold(str(p.props, "mode"), "System") && !hasSystemPool(c.pools, p) {
		return nil, errNotAllowed("Operation is not allowed: agent pool '%s' is the last agent pool of mode System and cannot be deleted; add another System pool first.", p.name)
	}
	op := s.newOperation(c.sub, c.location(), c.id()+"/agentPools/"+p.name, StateDeleting, now, s.opts.DeleteDelay, true)
	p.state, p.op, p.etag = StateDeleting, op, newETag()
	c.etag = newETag()
	op.finish = func(ok bool) {
		if ok && p.op == op {
			for i, q := range c.pools {
				if q == p {
					c.pools = append(c.pools[:i:i], c.pools[i+1:]...)
					break
				}
			}
			c.etag = newETag()
			return
		}
		c.finish(op, false, nil, nil)
	}
	return &reply{status: http.StatusAccepted, header: s.lroHeaders(r, op)}, nil
}
