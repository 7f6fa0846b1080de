package akstest

import (
	"net/http"
	"net/url"
	"strings"
	"time"
)

// operation is a long-running operation (LRO): it runs from start to
// done, then finish applies it (ok) or records its failure (!ok).
type operation struct {
	id, sub, location, resourceID string
	// kind is the provisioningState its resource shows meanwhile.
	kind   string
	status string
	start  time.Time
	done   time.Time
	end    time.Time
	// fail, when set, is the error it ends Failed with (FailOperations).
	fail *opFault
	// errCode and errMessage describe a Failed or Canceled end.
	errCode, errMessage string
	// finish applies the operation (ok) or marks its resources Failed.
	finish func(ok bool)
}

// newOperation starts an operation that completes delay after now. A
// failable one takes the next injected failure (FailOperations).
func (s *Server) newOperation(sub, location, resourceID, kind string, now time.Time, delay time.Duration, failable bool) *operation {
	op := &operation{
		id: newUUID(), sub: sub, location: location, resourceID: resourceID, kind: kind,
		status: OperationInProgress, start: now, done: now.Add(delay),
	}
	if failable && len(s.opFaults) > 0 {
		op.fail, s.opFaults = &s.opFaults[0], s.opFaults[1:]
	}
	s.ops[op.id] = op
	s.running = append(s.running, op)
	return op
}

// settle completes every operation that is due at the current time, in the
// order they started, and returns that time. Called with s.mu held.
func (s *Server) settle() time.Time {
	now := s.opts.Now()
	keep := s.running[:0]
	for _, op := range s.running {
		if op.status != OperationInProgress {
			continue
		}
		if now.Before(op.done) {
			keep = append(keep, op)
			continue
		}
		op.end = op.done
		if op.fail != nil {
			op.status, op.errCode, op.errMessage = StateFailed, op.fail.code, op.fail.message
		} else {
			op.status = StateSucceeded
		}
		if op.finish != nil {
			op.finish(op.fail == nil)
		}
	}
	for i := len(keep); i < len(s.running); i++ {
		s.running[i] = nil
	}
	s.running = keep
	return now
}

// cancel ends a running operation Canceled, without applying it.
func (op *operation) cancel(at time.Time, message string) {
	if op == nil || op.status != OperationInProgress {
		return
	}
	op.status, op.end = StateCanceled, at
	op.errCode, op.errMessage = "Canceled", message
}

// lroHeaders are the polling headers of an answer that started op:
// Azure-AsyncOperation (and Location for DELETE) and Retry-After-Ms.
func (s *Server) lroHeaders(r *req, op *operation) http.Header {
	v := r.query.Get("api-version")
	if v == "" {
		v = APIVersion
	}
	base := r.base + "/subscriptions/" + url.PathEscape(op.sub) + "/providers/Microsoft.ContainerService/locations/" + url.PathEscape(op.location)
	q := "?api-version=" + url.QueryEscape(v)
	h := http.Header{}
	h.Set("Azure-AsyncOperation", base+"/operations/"+op.id+q)
	if r.method == http.MethodDelete {
		h.Set("Location", base+"/operationresults/"+op.id+q)
	}
	h.Set("Retry-After-Ms", s.retryAfterMs())
	return h
}

func (s *Server) findOperation(r *req) (*operation, *APIError) {
	op := s.ops[strings.ToLower(r.id)]
	if op == nil || !strings.EqualFold(op.sub, r.sub) {
		return nil, apiErr(http.StatusNotFound, "NotFound", "Operation '%s' was not found.", r.id)
	}
	return op, nil
}

// getOperation answers an Azure-AsyncOperation poll: 200 with
// {id, name, status, startTime[, endTime][, error]}; while InProgress it
// carries Retry-After-Ms.
func (s *Server) getOperation(r *req) (*reply, *APIError) {
	op, e := s.findOperation(r)
	if e != nil {
		return nil, e
	}
	body := obj{
		"id":        "/subscriptions/" + op.sub + "/providers/Microsoft.ContainerService/locations/" + op.location + "/operations/" + op.id,
		"name":      op.id,
		"status":    op.status,
		"startTime": op.start.UTC().Format(time.RFC3339Nano),
	}
	h := http.Header{}
	if op.status == OperationInProgress {
		h.Set("Retry-After-Ms", s.retryAfterMs())
	} else {
		body["endTime"] = op.end.UTC().Format(time.RFC3339Nano)
	}
	if op.errCode != "" {
		body["error"] = obj{"code": op.errCode, "message": op.errMessage}
	}
	return &reply{status: http.StatusOK, header: h, body: body}, nil
}

// getOperationResult answers a Location poll: 202 while the operation runs,
// 200 without a body once it Succeeded, and the operation's error with 400
// (Failed) or 409 (Canceled) otherwise.
func (s *Server) getOperationResult(r *req) (*reply, *APIError) {
	op, e := s.findOperation(r)
	if e != nil {
		return nil, e
	}
	switch op.status {
	case OperationInProgress:
		h := http.Header{}
		h.Set("Retry-After-Ms", s.retryAfterMs())
		return &reply{status: http.StatusAccepted, header: h}, nil
	case StateSucceeded:
		return &reply{status: http.StatusOK}, nil
	case StateCanceled:
		return nil, &APIError{Status: http.StatusConflict, Code: op.errCode, Message: op.errMessage}
	}
	return nil, &APIError{Status: http.StatusBadRequest, Code: op.errCode, Message: op.errMessage}
}
