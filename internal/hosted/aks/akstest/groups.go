package akstest

import (
	"net/http"
	"sort"
	"strings"
	"time"
)

// group is a resource group.
type group struct {
	sub, name, location string
	tags                map[string]string
	managedBy           string
	// deleting is the running deletion, nil if none.
	deleting *operation
}

func groupKey(sub, rg string) string { return strings.ToLower(sub + "/" + rg) }

func (s *Server) group(sub, rg string) *group { return s.groups[groupKey(sub, rg)] }

func groupID(sub, rg string) string { return "/subscriptions/" + sub + "/resourceGroups/" + rg }

func errGroupNotFound(rg string) *APIError {
	return apiErr(http.StatusNotFound, "ResourceGroupNotFound", "Resource group '%s' could not be found.", rg)
}

func errGroupDeleting(rg string) *APIError {
	return apiErr(http.StatusConflict, "ResourceGroupBeingDeleted",
		"The resource group '%s' is in deprovisioning state and cannot perform this operation.", rg)
}

func (g *group) render() obj {
	state := StateSucceeded
	if g.deleting != nil {
		state = StateDeleting
	}
	out := obj{
		"id": groupID(g.sub, g.name), "name": g.name, "type": "Microsoft.Resources/resourceGroups",
		"location": g.location, "properties": obj{"provisioningState": state},
	}
	if len(g.tags) > 0 {
		out["tags"] = tagsObj(g.tags)
	}
	if g.managedBy != "" {
		out["managedBy"] = g.managedBy
	}
	return out
}

func (s *Server) listGroups(r *req) (*reply, *APIError) {
	var gs []*group
	for _, g := range s.groups {
		if strings.EqualFold(g.sub, r.sub) {
			gs = append(gs, g)
		}
	}
	sort.Slice(gs, func(i, j int) bool { return strings.ToLower(gs[i].name) < strings.ToLower(gs[j].name) })
	list := []any{}
	for _, g := range gs {
		list = append(list, g.render())
	}
	return &reply{status: http.StatusOK, body: obj{"value": list}}, nil
}

// putGroup creates (201) or updates (200) a resource group: the location
// cannot change (409 InvalidResourceGroupLocation, as ARM answers), tags
// and managedBy are replaced.
func (s *Server) putGroup(r *req, now time.Time) (*reply, *APIError) {
	body, e := decodeBody(r.body)
	if e != nil {
		return nil, e
	}
	loc := normLocation(str(body, "location"))
	if loc == "" {
		return nil, apiErr(http.StatusBadRequest, "LocationRequired", "The location property is required for this definition.")
	}
	if g := s.group(r.sub, r.rg); g != nil {
		if g.deleting != nil {
			return nil, errGroupDeleting(g.name)
		}
		if g.location != loc {
			return nil, apiErr(http.StatusConflict, "InvalidResourceGroupLocation",
				"Invalid resource group location '%s'. The Resource group already exists in location '%s'.", loc, g.location)
		}
		g.tags = strMap(body, "tags")
		g.managedBy = str(body, "managedBy")
		return &reply{status: http.StatusOK, body: g.render()}, nil
	}
	g := &group{sub: r.sub, name: r.rg, location: loc, tags: strMap(body, "tags"), managedBy: str(body, "managedBy")}
	s.groups[groupKey(r.sub, r.rg)] = g
	return &reply{status: http.StatusCreated, body: g.render()}, nil
}

// deleteGroup starts deleting a resource group and every managed cluster
// in it, whatever they are doing (their running operations end
// Canceled): 202 with a Location header to poll, as ARM answers for
// resource groups; the group and its clusters disappear after DeleteDelay.
// A group already being deleted answers 202 with the same operation; an
// absent group is 404 ResourceGroupNotFound.
func (s *Server) deleteGroup(r *req, now time.Time) (*reply, *APIError) {
	g := s.group(r.sub, r.rg)
	if g == nil {
		return nil, errGroupNotFound(r.rg)
	}
	if g.deleting == nil {
		op := s.newOperation(g.sub, g.location, groupID(g.sub, g.name), StateDeleting, now, s.opts.DeleteDelay, false)
		g.deleting = op
		var doomed []*cluster
		for _, c := range s.clusters {
			if strings.EqualFold(c.sub, g.sub) && strings.EqualFold(c.rg, g.name) {
				doomed = append(doomed, c)
				c.supersede(op, StateDeleting)
			}
		}
		op.finish = func(ok bool) {
			delete(s.groups, groupKey(g.sub, g.name))
			for _, c := range doomed {
				if c.op == op {
					delete(s.clusters, c.key())
				}
			}
		}
	}
	h := http.Header{}
	h.Set("Location", r.base+"/subscriptions/"+g.sub+"/operationresults/"+g.deleting.id+"?api-version="+ResourcesAPIVersion)
	h.Set("Retry-After-Ms", s.retryAfterMs())
	return &reply{status: http.StatusAccepted, header: h}, nil
}
