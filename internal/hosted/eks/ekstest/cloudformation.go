package ekstest

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Stack statuses, as CloudFormation spells them.
const (
	// StackCreateInProgress is the status of a stack being created.
	StackCreateInProgress = "CREATE_IN_PROGRESS"
	// StackCreateComplete is the status of a created stack.
	StackCreateComplete = "CREATE_COMPLETE"
	// StackCreateFailed is the status of a stack whose creation failed with
	// rollback disabled (OnFailure DO_NOTHING or DisableRollback).
	StackCreateFailed = "CREATE_FAILED"
	// StackRollbackComplete is the status of a stack whose creation failed
	// and was rolled back (the default OnFailure ROLLBACK).
	StackRollbackComplete = "ROLLBACK_COMPLETE"
	// StackDeleteInProgress is the status of a stack being deleted.
	StackDeleteInProgress = "DELETE_IN_PROGRESS"
	// StackDeleteComplete is the status of a deleted stack; it is only
	// found by stack ID.
	StackDeleteComplete = "DELETE_COMPLETE"
	// StackDeleteFailed is the status of a stack whose deletion failed
	// (the emulator: a resource still used by an EKS cluster).
	StackDeleteFailed = "DELETE_FAILED"
)

var cloudFormationActions = []string{"CreateStack", "DescribeStacks", "DeleteStack"}

type stack struct {
	id, name, description, status, reason, onFailure string
	createdAt, readyAt, deleteAt, deletedAt          time.Time
	capabilities                                     []string
	paramOrder, tagOrder, outputOrder                []string
	params, tags, outputs                            map[string]string
	resourceOrder                                    []string
	resources                                        map[string]*stackResource
	// failReason, when set, makes the creation fail at readyAt.
	failReason string
	token      string
}

// stackResource is a resource a stack created: its type, physical ID, ARN
// (IAM), and for subnets and security groups the VPC they belong to.
type stackResource struct {
	typ, physicalID, arn, vpc string
}

// cfnTemplate is the part of a CloudFormation template the emulator reads.
type cfnTemplate struct {
	Description string                 `json:"Description"`
	Parameters  map[string]cfnParam    `json:"Parameters"`
	Resources   map[string]cfnResource `json:"Resources"`
	Outputs     map[string]cfnOutput   `json:"Outputs"`
}

type cfnParam struct {
	Type    string `json:"Type"`
	Default any    `json:"Default"`
}

type cfnResource struct {
	Type       string         `json:"Type"`
	Properties map[string]any `json:"Properties"`
	DependsOn  any            `json:"DependsOn"`
}

type cfnOutput struct {
	Description string `json:"Description"`
	Value       any    `json:"Value"`
}

var stackNameRE = regexp.MustCompile(`^[a-zA-Z][-a-zA-Z0-9]*$`)

// iamNameProperty is the property that names an IAM resource; naming one
// needs CAPABILITY_NAMED_IAM, creating one CAPABILITY_IAM.
var iamNameProperty = map[string]string{
	"AWS::IAM::Role": "RoleName", "AWS::IAM::InstanceProfile": "InstanceProfileName",
	"AWS::IAM::ManagedPolicy": "ManagedPolicyName", "AWS::IAM::Policy": "",
	"AWS::IAM::User": "UserName", "AWS::IAM::Group": "GroupName",
}

func (s *Server) cfnDispatch(action string, f form, now time.Time) (*cfnResult, *queryError) {
	switch action {
	case "CreateStack":
		st, err := s.createStack(f, now)
		if err != nil {
			return nil, err
		}
		return &cfnResult{StackID: st.id}, nil
	case "DescribeStacks":
		name := f.str("StackName")
		if name == "" {
			var out []cfnStackXML
			for _, st := range s.liveStacks() {
				out = append(out, s.stackXML(st))
			}
			return &cfnResult{Stacks: &cfnStacks{Members: out}}, nil
		}
		st := s.findStack(name)
		if st == nil {
			return nil, cfnValidation("Stack with id %s does not exist", name)
		}
		return &cfnResult{Stacks: &cfnStacks{Members: []cfnStackXML{s.stackXML(st)}}}, nil
	case "DeleteStack":
		name := f.str("StackName")
		if name == "" {
			return nil, cfnValidation("1 validation error detected: Value null at 'stackName' failed to satisfy constraint: Member must not be null")
		}
		st := s.findStack(name)
		if st == nil || st.status == StackDeleteComplete || st.status == StackDeleteInProgress {
			return nil, nil // deleting what does not exist succeeds, as in CloudFormation
		}
		st.status, st.reason = StackDeleteInProgress, "User Initiated"
		st.deleteAt = now.Add(s.opts.StackDeleteDelay)
		return nil, nil
	}
	return nil, &queryError{status: http.StatusBadRequest, code: "InvalidAction", message: action}
}

// liveStacks returns the stacks not yet deleted, oldest first.
func (s *Server) liveStacks() []*stack {
	out := slices.Collect(maps.Values(s.stacks))
	slices.SortFunc(out, func(a, b *stack) int { return a.createdAt.Compare(b.createdAt) })
	return out
}

// findStack finds a live stack by name or ID, or a deleted one by ID.
func (s *Server) findStack(nameOrID string) *stack {
	if st := s.stacks[nameOrID]; st != nil {
		return st
	}
	for _, st := range s.stacks {
		if st.id == nameOrID {
			return st
		}
	}
	for _, st := range s.deletedStacks {
		if st.id == nameOrID {
			return st
		}
	}
	return nil
}

func (s *Server) createStack(f form, now time.Time) (*stack, *queryError) {
	name := f.str("StackName")
	if len(name) == 0 || len(name) > 128 || !stackNameRE.MatchString(name) {
		return nil, cfnValidation("1 validation error detected: Value '%s' at 'stackName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z][-a-zA-Z0-9]*", name)
	}
	token := f.str("ClientRequestToken")
	if existing := s.stacks[name]; existing != nil {
		if token != "" && existing.token == token {
			return existing, nil
		}
		return nil, &queryError{status: http.StatusBadRequest, code: "AlreadyExistsException", message: fmt.Sprintf("Stack [%s] already exists", name)}
	}
	body := f.str("TemplateBody")
	if body == "" {
		return nil, cfnValidation("Either Template URL or Template Body must be specified (the emulator needs TemplateBody).")
	}
	var tmpl cfnTemplate
	if err := json.Unmarshal([]byte(body), &tmpl); err != nil {
		return nil, cfnValidation("Template format error: JSON not well-formed (the emulator reads JSON templates only): %v", err)
	}
	if len(tmpl.Resources) == 0 {
		return nil, cfnValidation("Template format error: At least one Resources member must be defined.")
	}
	st := &stack{
		id:   fmt.Sprintf("arn:aws:cloudformation:%s:%s:stack/%s/%s", s.opts.Region, s.opts.AccountID, name, newUUID()),
		name: name, description: tmpl.Description, status: StackCreateInProgress, token: token,
		createdAt: now, readyAt: now.Add(s.opts.StackCreateDelay), onFailure: f.str("OnFailure"),
		capabilities: f.strs("Capabilities"), params: map[string]string{}, outputs: map[string]string{},
		resources: map[string]*stackResource{},
	}
	if f.str("DisableRollback") == "true" {
		st.onFailure = "DO_NOTHING"
	}
	st.tagOrder, st.tags = f.tags("Tags")
	if err := st.bindParameters(f, tmpl); err != nil {
		return nil, err
	}
	if err := checkCapabilities(tmpl, st.capabilities); err != nil {
		return nil, err
	}
	if err := s.instantiate(st, tmpl); err != nil {
		return nil, err
	}
	if reason, ok := s.stackFaults[name]; ok {
		delete(s.stackFaults, name)
		st.failReason = reason
	}
	s.stacks[name] = st
	return st, nil
}

// bindParameters sets the stack's parameters from the template's defaults
// and the request.
func (st *stack) bindParameters(f form, tmpl cfnTemplate) *queryError {
	given := map[string]string{}
	for _, p := range f.list("Parameters") {
		given[f.str(p+".ParameterKey")] = f.str(p + ".ParameterValue")
	}
	var unknown, missing []string
	for k := range given {
		if _, ok := tmpl.Parameters[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return cfnValidation("Parameters: [%s] do not exist in the template", strings.Join(unknown, ", "))
	}
	for _, k := range slices.Sorted(maps.Keys(tmpl.Parameters)) {
		v, ok := given[k]
		if !ok {
			if d := tmpl.Parameters[k].Default; d != nil {
				v, ok = fmt.Sprint(d), true
			}
		}
		if !ok {
			missing = append(missing, k)
			continue
		}
		st.params[k] = v
		st.paramOrder = append(st.paramOrder, k)
	}
	if len(missing) > 0 {
		return cfnValidation("Parameters: [%s] must have values", strings.Join(missing, ", "))
	}
	return nil
}

func checkCapabilities(tmpl cfnTemplate, caps []string) *queryError {
	need := ""
	for _, r := range tmpl.Resources {
		prop, isIAM := iamNameProperty[r.Type]
		if !isIAM {
			continue
		}
		if need == "" {
			need = "CAPABILITY_IAM"
		}
		if _, named := r.Properties[prop]; prop != "" && named {
			need = "CAPABILITY_NAMED_IAM"
		}
	}
	switch {
	case need == "" || slices.Contains(caps, "CAPABILITY_NAMED_IAM"):
		return nil
	case need == "CAPABILITY_IAM" && slices.Contains(caps, "CAPABILITY_IAM"):
		return nil
	}
	return &queryError{status: http.StatusBadRequest, code: "InsufficientCapabilitiesException", message: "Requires capabilities : [" + need + "]"}
}

// instantiate checks the template's references, gives every resource a
// physical ID and evaluates the outputs.
func (s *Server) instantiate(st *stack, tmpl cfnTemplate) *queryError {
	st.resourceOrder = slices.Sorted(maps.Keys(tmpl.Resources))
	var unresolved []string
	for _, logical := range st.resourceOrder {
		r := tmpl.Resources[logical]
		if r.Type == "" {
			return cfnValidation("Template format error: [/Resources/%s] Every Resources object must contain a Type member.", logical)
		}
		refs := map[string]bool{}
		collectRefs(r.Properties, refs)
		collectDependsOn(r.DependsOn, refs)
		for ref := range refs {
			if !st.resolvable(ref, tmpl) {
				unresolved = append(unresolved, ref)
			}
		}
	}
	if len(unresolved) > 0 {
		slices.Sort(unresolved)
		return cfnValidation("Template format error: Unresolved resource dependencies [%s] in the Resources block of the template", strings.Join(slices.Compact(unresolved), ", "))
	}
	for _, logical := range st.resourceOrder {
		st.resources[logical] = s.physical(st, logical, tmpl.Resources[logical])
	}
	// Subnets and security groups belong to the VPC their VpcId refers to.
	for _, logical := range st.resourceOrder {
		res := st.resources[logical]
		if ref, ok := tmpl.Resources[logical].Properties["VpcId"].(map[string]any); ok {
			if name, ok := ref["Ref"].(string); ok && st.resources[name] != nil && st.resources[name].typ == "AWS::EC2::VPC" {
				res.vpc = st.resources[name].physicalID
			}
		}
	}
	st.outputOrder = slices.Sorted(maps.Keys(tmpl.Outputs))
	for _, k := range st.outputOrder {
		v, err := st.eval(tmpl.Outputs[k].Value, s)
		if err != nil {
			return err
		}
		st.outputs[k] = v
	}
	return nil
}

var pseudoParameters = []string{"AWS::Region", "AWS::AccountId", "AWS::StackName", "AWS::StackId", "AWS::Partition", "AWS::URLSuffix", "AWS::NoValue"}

func (st *stack) resolvable(ref string, tmpl cfnTemplate) bool {
	_, isParam := tmpl.Parameters[ref]
	_, isRes := tmpl.Resources[ref]
	return isParam || isRes || slices.Contains(pseudoParameters, ref)
}

var subVarRE = regexp.MustCompile(`\$\{([^}!][^}]*)\}`)

// collectRefs gathers the names a value refers to: Ref targets, Fn::GetAtt
// resources and Fn::Sub variables.
func collectRefs(v any, out map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 1 {
			if name, ok := v["Ref"].(string); ok {
				out[name] = true
				return
			}
			if att, ok := v["Fn::GetAtt"]; ok {
				if res, _, ok := getAttArgs(att); ok {
					out[res] = true
				}
				return
			}
			if sub, ok := v["Fn::Sub"].(string); ok {
				for _, m := range subVarRE.FindAllStringSubmatch(sub, -1) {
					head, _, _ := strings.Cut(m[1], ".")
					out[head] = true
				}
				return
			}
		}
		for _, e := range v {
			collectRefs(e, out)
		}
	case []any:
		for _, e := range v {
			collectRefs(e, out)
		}
	}
}

func collectDependsOn(v any, out map[string]bool) {
	switch v := v.(type) {
	case string:
		out[v] = true
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				out[s] = true
			}
		}
	}
}

func getAttArgs(v any) (res, attr string, ok bool) {
	switch v := v.(type) {
	case string:
		res, attr, ok = strings.Cut(v, ".")
		return res, attr, ok
	case []any:
		if len(v) == 2 {
			r, ok1 := v[0].(string)
			a, ok2 := v[1].(string)
			return r, a, ok1 && ok2
		}
	}
	return "", "", false
}

// physical makes the physical ID (and ARN) of a resource as CloudFormation
// would: AWS-style IDs for EC2 resources, "<stack>-<logical>-<suffix>"
// names for the rest.
func (s *Server) physical(st *stack, logical string, r cfnResource) *stackResource {
	h := shortHash(st.id, logical)
	res := &stackResource{typ: r.Type}
	prefix := map[string]string{
		"AWS::EC2::VPC": "vpc-", "AWS::EC2::Subnet": "subnet-", "AWS::EC2::SecurityGroup": "sg-",
		"AWS::EC2::InternetGateway": "igw-", "AWS::EC2::RouteTable": "rtb-", "AWS::EC2::SubnetRouteTableAssociation": "rtbassoc-",
		"AWS::EC2::NatGateway": "nat-", "AWS::EC2::EIP": "eipalloc-",
	}[r.Type]
	if prefix != "" {
		res.physicalID = prefix + h
		return res
	}
	name := st.name + "-" + logical + "-" + strings.ToUpper(h[:12])
	if prop := iamNameProperty[r.Type]; prop != "" {
		if n, ok := r.Properties[prop].(string); ok {
			name = n
		}
		if len(name) > 64 {
			name = name[:52] + strings.ToUpper(h[:12])
		}
	}
	res.physicalID = name
	switch r.Type {
	case "AWS::IAM::Role":
		res.arn = fmt.Sprintf("arn:aws:iam::%s:role/%s", s.opts.AccountID, name)
	case "AWS::IAM::InstanceProfile":
		res.arn = fmt.Sprintf("arn:aws:iam::%s:instance-profile/%s", s.opts.AccountID, name)
	case "AWS::IAM::ManagedPolicy":
		res.arn = fmt.Sprintf("arn:aws:iam::%s:policy/%s", s.opts.AccountID, name)
		res.physicalID = res.arn
	}
	return res
}

// eval evaluates an output value: literals, Ref, Fn::GetAtt, Fn::Join and
// Fn::Sub. Other intrinsic functions are refused with a ValidationError
// naming them, so that a template the emulator cannot evaluate is noticed.
func (st *stack) eval(v any, s *Server) (string, *queryError) {
	switch v := v.(type) {
	case string:
		return v, nil
	case float64, bool:
		return fmt.Sprint(v), nil
	case map[string]any:
		if len(v) != 1 {
			break
		}
		for fn, arg := range v {
			switch fn {
			case "Ref":
				name, _ := arg.(string)
				return st.ref(name, s)
			case "Fn::GetAtt":
				res, attr, ok := getAttArgs(arg)
				if !ok {
					return "", cfnValidation("Template error: every Fn::GetAtt object requires two non-empty parameters")
				}
				return st.getAtt(res, attr)
			case "Fn::Join":
				args, ok := arg.([]any)
				if !ok || len(args) != 2 {
					return "", cfnValidation("Template error: every Fn::Join object requires two parameters")
				}
				sep, _ := args[0].(string)
				items, _ := args[1].([]any)
				parts := make([]string, 0, len(items))
				for _, it := range items {
					p, err := st.eval(it, s)
					if err != nil {
						return "", err
					}
					parts = append(parts, p)
				}
				return strings.Join(parts, sep), nil
			case "Fn::Sub":
				tmpl, ok := arg.(string)
				if !ok {
					return "", cfnValidation("Template error: the emulator evaluates Fn::Sub with a string only")
				}
				var err *queryError
				out := subVarRE.ReplaceAllStringFunc(tmpl, func(m string) string {
					name := m[2 : len(m)-1]
					var v string
					var e *queryError
					if res, attr, ok := strings.Cut(name, "."); ok {
						v, e = st.getAtt(res, attr)
					} else {
						v, e = st.ref(name, s)
					}
					if e != nil && err == nil {
						err = e
					}
					return v
				})
				return strings.ReplaceAll(out, "${!", "${"), err
			default:
				return "", cfnValidation("Template error: the emulator does not evaluate %s in Outputs", fn)
			}
		}
	}
	return "", cfnValidation("Template error: the emulator cannot evaluate output value %v", v)
}

func (st *stack) ref(name string, s *Server) (string, *queryError) {
	switch name {
	case "AWS::Region":
		return s.opts.Region, nil
	case "AWS::AccountId":
		return s.opts.AccountID, nil
	case "AWS::StackName":
		return st.name, nil
	case "AWS::StackId":
		return st.id, nil
	case "AWS::Partition":
		return "aws", nil
	case "AWS::URLSuffix":
		return "amazonaws.com", nil
	}
	if v, ok := st.params[name]; ok {
		return v, nil
	}
	if r := st.resources[name]; r != nil {
		return r.physicalID, nil
	}
	return "", cfnValidation("Template format error: Unresolved resource dependencies [%s] in the Outputs block of the template", name)
}

func (st *stack) getAtt(res, attr string) (string, *queryError) {
	r := st.resources[res]
	if r == nil {
		return "", cfnValidation("Template format error: Unresolved resource dependencies [%s] in the Outputs block of the template", res)
	}
	switch {
	case attr == "Arn" && r.arn != "":
		return r.arn, nil
	case attr == "RoleId" && r.typ == "AWS::IAM::Role":
		return "AROA" + strings.ToUpper(shortHash(r.arn)), nil
	case attr == "GroupId" && r.typ == "AWS::EC2::SecurityGroup", attr == "SubnetId" && r.typ == "AWS::EC2::Subnet":
		return r.physicalID, nil
	case attr == "VpcId" && r.vpc != "":
		return r.vpc, nil
	}
	return "", cfnValidation("Template error: resource %s does not support attribute type %s in Fn::GetAtt (in the emulator)", res, attr)
}

// settleStacks applies the due stack transitions. A VPC stack whose
// subnets or security groups an EKS cluster still uses fails to delete, as
// CloudFormation does when EC2 refuses to delete them.
func (s *Server) settleStacks(now time.Time) {
	for name, st := range s.stacks {
		switch {
		case st.status == StackCreateInProgress && !now.Before(st.readyAt):
			if st.failReason == "" {
				st.status, st.reason = StackCreateComplete, ""
				continue
			}
			st.reason = st.failReason
			switch st.onFailure {
			case "DO_NOTHING":
				st.status = StackCreateFailed
			case "DELETE":
				st.status, st.deletedAt = StackDeleteComplete, st.readyAt
				s.deletedStacks = append(s.deletedStacks, st)
				delete(s.stacks, name)
			default:
				st.status = StackRollbackComplete
			}
		case st.status == StackDeleteInProgress && !now.Before(st.deleteAt):
			if used := s.resourcesInUse(st); len(used) > 0 {
				st.status = StackDeleteFailed
				st.reason = "The following resource(s) failed to delete: [" + strings.Join(used, ", ") + "]. "
				continue
			}
			st.status, st.reason, st.deletedAt = StackDeleteComplete, "", st.deleteAt
			s.deletedStacks = append(s.deletedStacks, st)
			delete(s.stacks, name)
		}
	}
}

// resourcesInUse returns the logical IDs of a stack's subnets, security
// groups and VPCs that an EKS cluster uses.
func (s *Server) resourcesInUse(st *stack) []string {
	used := map[string]bool{}
	for _, c := range s.state {
		for _, id := range c.subnets {
			used[id] = true
		}
		for _, id := range c.securityGroups {
			used[id] = true
		}
		used[c.vpcID] = true
	}
	var out []string
	for _, logical := range st.resourceOrder {
		if used[st.resources[logical].physicalID] {
			out = append(out, logical)
		}
	}
	return out
}

// vpcOfSubnet returns the VPC of a subnet created by a stack, or "".
func (s *Server) vpcOfSubnet(subnet string) string {
	for _, st := range s.stacks {
		for _, r := range st.resources {
			if r.typ == "AWS::EC2::Subnet" && r.physicalID == subnet {
				return r.vpc
			}
		}
	}
	return ""
}

// XML shapes of the awsquery responses.

type cfnResponse struct {
	XMLName   xml.Name
	Xmlns     string     `xml:"xmlns,attr"`
	Result    *cfnResult `xml:",omitempty"`
	RequestID string     `xml:"ResponseMetadata>RequestId"`
}

type cfnResult struct {
	XMLName xml.Name
	StackID string     `xml:"StackId,omitempty"`
	Stacks  *cfnStacks `xml:"Stacks,omitempty"`
}

type cfnStacks struct {
	Members []cfnStackXML `xml:"member"`
}

type cfnKeyValueXML struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

type cfnOutputXML struct {
	OutputKey   string `xml:"OutputKey"`
	OutputValue string `xml:"OutputValue"`
}

type cfnParameterXML struct {
	ParameterKey   string `xml:"ParameterKey"`
	ParameterValue string `xml:"ParameterValue"`
}

type cfnStackXML struct {
	StackID           string            `xml:"StackId"`
	StackName         string            `xml:"StackName"`
	Description       string            `xml:"Description,omitempty"`
	CreationTime      string            `xml:"CreationTime"`
	DeletionTime      string            `xml:"DeletionTime,omitempty"`
	StackStatus       string            `xml:"StackStatus"`
	StackStatusReason string            `xml:"StackStatusReason,omitempty"`
	DisableRollback   bool              `xml:"DisableRollback"`
	Capabilities      []string          `xml:"Capabilities>member"`
	Parameters        []cfnParameterXML `xml:"Parameters>member"`
	Outputs           []cfnOutputXML    `xml:"Outputs>member"`
	Tags              []cfnKeyValueXML  `xml:"Tags>member"`
}

func (s *Server) stackXML(st *stack) cfnStackXML {
	x := cfnStackXML{
		StackID: st.id, StackName: st.name, Description: st.description, CreationTime: isoTime(st.createdAt),
		StackStatus: st.status, StackStatusReason: st.reason, DisableRollback: st.onFailure == "DO_NOTHING",
		Capabilities: st.capabilities,
	}
	if !st.deletedAt.IsZero() {
		x.DeletionTime = isoTime(st.deletedAt)
	}
	for _, k := range st.paramOrder {
		x.Parameters = append(x.Parameters, cfnParameterXML{ParameterKey: k, ParameterValue: st.params[k]})
	}
	for _, k := range st.tagOrder {
		x.Tags = append(x.Tags, cfnKeyValueXML{Key: k, Value: st.tags[k]})
	}
	// Outputs exist once the stack is created, as in CloudFormation.
	if st.status == StackCreateComplete || st.status == StackDeleteInProgress || st.status == StackDeleteFailed {
		for _, k := range st.outputOrder {
			x.Outputs = append(x.Outputs, cfnOutputXML{OutputKey: k, OutputValue: st.outputs[k]})
		}
	}
	return x
}

// StackSnapshot is a copy of a CloudFormation stack's emulated state.
type StackSnapshot struct {
	// Name, ID, Status and StatusReason are as DescribeStacks reports them.
	Name, ID, Status, StatusReason string
	// Capabilities are the capabilities the stack was created with.
	Capabilities []string
	// Parameters, Tags and Outputs of the stack (Outputs are evaluated at
	// creation; DescribeStacks shows them once CREATE_COMPLETE).
	Parameters, Tags, Outputs map[string]string
	// Resources maps logical ID to "Type physicalID".
	Resources map[string]string
}

// Stack returns a snapshot of the stack with the given name (or ID) after
// applying due transitions, and whether it exists. A deleted stack is only
// found by ID, with status DELETE_COMPLETE.
func (s *Server) Stack(nameOrID string) (StackSnapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	st := s.findStack(nameOrID)
	if st == nil {
		return StackSnapshot{}, false
	}
	snap := StackSnapshot{
		Name: st.name, ID: st.id, Status: st.status, StatusReason: st.reason,
		Capabilities: slices.Clone(st.capabilities), Parameters: copyMap(st.params), Tags: copyMap(st.tags),
		Outputs: copyMap(st.outputs), Resources: map[string]string{},
	}
	for k, r := range st.resources {
		snap.Resources[k] = r.typ + " " + r.physicalID
	}
	return snap, true
}

// StackNames returns the names of the stacks that are not deleted, sorted.
func (s *Server) StackNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	return slices.Sorted(maps.Keys(s.stacks))
}

// FailStackCreate makes the next stack created with the given name fail:
// once StackCreateDelay has passed it is ROLLBACK_COMPLETE (CREATE_FAILED
// with OnFailure DO_NOTHING, deleted with OnFailure DELETE) with reason as
// its status reason.
func (s *Server) FailStackCreate(name, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stackFaults[name] = reason
}
