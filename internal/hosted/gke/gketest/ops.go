package gketest

import (
	"strconv"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	status "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
)

// operationFailedCode is the google.rpc.Code of an operation ended by
// FailOperations (13, INTERNAL).
const operationFailedCode = 13

// operation is a GKE operation: PENDING when it starts, RUNNING once the
// server looks at it again, DONE at due; finish then applies its change
// (ok) or records its failure (!ok).
type operation struct {
	pb                *containerpb.Operation
	project, location string
	due               time.Time
	// fail, when not empty, is the message it ends with (FailOperations).
	fail string
	// finish applies the change (ok) or leaves the failure state (!ok).
	finish func(ok bool)
}

// done reports whether the operation has ended.
func (op *operation) done() bool {
	return op == nil || op.pb.GetStatus() == containerpb.Operation_DONE
}

// newOperation starts an operation of type typ on the resource at target
// (a selfLink) that is DONE delay after now, taking the next injected
// failure (FailOperations). Called with s.mu held.
func (s *Server) newOperation(project, location string, typ containerpb.Operation_Type, target string, now time.Time, delay time.Duration) *operation {
	name := ""
	for name == "" || s.ops[opKey(project, location, name)] != nil {
		name = "operation-" + strconv.FormatInt(now.UnixMilli(), 10) + "-" + randomHex(8)
	}
	op := &operation{
		pb: &containerpb.Operation{
			Name:          name,
			Zone:          location,
			Location:      location,
			OperationType: typ,
			Status:        containerpb.Operation_PENDING,
			SelfLink:      locationLink(project, location) + "/operations/" + name,
			TargetLink:    target,
			StartTime:     timestamp(now),
		},
		project: project, location: location, due: now.Add(delay),
	}
	if len(s.opFaults) > 0 {
		op.fail, s.opFaults = s.opFaults[0], s.opFaults[1:]
	}
	s.ops[opKey(project, location, name)] = op
	s.opOrder = append(s.opOrder, op)
	s.running = append(s.running, op)
	return op
}

func opKey(project, location, name string) string { return project + "/" + location + "/" + name }

// settle moves the running operations on at the current time, in the
// order they started: those due end DONE (their change applied, or not
// when they fail), the others that are still PENDING become RUNNING. It
// returns that time. Called with s.mu held.
func (s *Server) settle() time.Time {
	now := s.opts.Now()
	keep := s.running[:0]
	for _, op := range s.running {
		if now.Before(op.due) {
			op.pb.Status = containerpb.Operation_RUNNING
			keep = append(keep, op)
			continue
		}
		op.pb.Status = containerpb.Operation_DONE
		op.pb.EndTime = timestamp(op.due)
		if op.fail != "" {
			op.pb.StatusMessage = op.fail
			op.pb.Error = &status.Status{Code: operationFailedCode, Message: op.fail}
		}
		if op.finish != nil {
			op.finish(op.fail == "")
		}
	}
	for i := len(keep); i < len(s.running); i++ {
		s.running[i] = nil
	}
	s.running = keep
	return now
}

// findOperation finds an operation of the project in location ("-": any
// location).
func (s *Server) findOperation(project, location, name string) (*operation, *APIError) {
	if location == "-" {
		for _, op := range s.opOrder {
			if op.project == project && op.pb.GetName() == name {
				return op, nil
			}
		}
	} else if op := s.ops[opKey(project, location, name)]; op != nil {
		return op, nil
	}
	return nil, errNotFound(locationName(project, location) + "/operations/" + name)
}

// listOperations answers operations.list: every operation of the project
// in the location ("-": all locations), done ones too, oldest first.
func (s *Server) listOperations(r *req) *containerpb.ListOperationsResponse {
	out := &containerpb.ListOperationsResponse{}
	var ops []*operation
	for _, op := range s.opOrder {
		if op.project == r.project && (r.location == "-" || op.location == r.location) {
			ops = append(ops, op)
		}
	}
	for _, op := range ops {
		out.Operations = append(out.Operations, proto.Clone(op.pb).(*containerpb.Operation))
	}
	return out
}

// timestamp formats t as GKE does (RFC 3339, UTC).
func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
