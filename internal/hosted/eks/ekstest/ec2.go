package ekstest

import (
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

var ec2Actions = []string{"CreateLaunchTemplate", "CreateLaunchTemplateVersion", "DescribeLaunchTemplates",
	"DescribeLaunchTemplateVersions", "DeleteLaunchTemplate", "DeleteLaunchTemplateVersions"}

type launchTemplate struct {
	id, name, token, createdBy    string
	createdAt                     time.Time
	defaultVersion, latestVersion int64
	tagOrder                      []string
	tags                          map[string]string
	versions                      map[int64]*templateVersion
}

type templateVersion struct {
	number           int64
	description      string
	createdAt        time.Time
	data             templateData
	token, signature string
}

// templateData is the part of a launch template version's data the
// emulator keeps (RequestLaunchTemplateData); other members are accepted
// and dropped.
type templateData struct {
	ImageID, InstanceType, KeyName, UserData string
	BlockDevices                             []blockDevice
	TagSpecs                                 []tagSpec
	SecurityGroupIDs                         []string
}

type blockDevice struct {
	DeviceName, VolumeType         string
	VolumeSize                     *int32
	DeleteOnTermination, Encrypted *bool
}

type tagSpec struct {
	ResourceType string
	Keys         []string
	Tags         map[string]string
}

var templateNameRE = regexp.MustCompile(`^[a-zA-Z0-9().\-/_]{3,128}$`)

func (s *Server) ec2Dispatch(action string, f form, now time.Time) (*ec2Response, *queryError) {
	switch action {
	case "CreateLaunchTemplate":
		lt, err := s.createLaunchTemplate(f, now)
		if err != nil {
			return nil, err
		}
		x := lt.xml()
		return &ec2Response{LaunchTemplate: &x}, nil
	case "CreateLaunchTemplateVersion":
		lt, err := s.templateOf(f)
		if err != nil {
			return nil, err
		}
		v, err := s.createTemplateVersion(lt, f, now)
		if err != nil {
			return nil, err
		}
		x := lt.versionXML(v)
		return &ec2Response{LaunchTemplateVersion: &x}, nil
	case "DescribeLaunchTemplates":
		var out []ec2LaunchTemplateXML
		ids, names := f.strs("LaunchTemplateId"), f.strs("LaunchTemplateName")
		if len(ids) == 0 && len(names) == 0 {
			for _, lt := range s.templatesByName() {
				out = append(out, lt.xml())
			}
		}
		for _, id := range ids {
			lt := s.templates[id]
			if lt == nil {
				return nil, errTemplateID(id)
			}
			out = append(out, lt.xml())
		}
		for _, name := range names {
			lt := s.templateNamed(name)
			if lt == nil {
				return nil, ec2Err("InvalidLaunchTemplateName.NotFoundException", "At least one of the launch templates specified in the request does not exist.")
			}
			out = append(out, lt.xml())
		}
		return &ec2Response{LaunchTemplates: &ec2LaunchTemplateSet{Items: out}}, nil
	case "DescribeLaunchTemplateVersions":
		lt, err := s.templateOf(f)
		if err != nil {
			return nil, err
		}
		vs, err := lt.selectVersions(f.strs("LaunchTemplateVersion"))
		if err != nil {
			return nil, err
		}
		out := []ec2VersionXML{}
		lo, loErr := strconv.ParseInt(f.str("MinVersion"), 10, 64)
		hi, hiErr := strconv.ParseInt(f.str("MaxVersion"), 10, 64)
		for _, v := range vs {
			if (loErr == nil && v.number < lo) || (hiErr == nil && v.number > hi) {
				continue
			}
			out = append(out, lt.versionXML(v))
		}
		return &ec2Response{LaunchTemplateVersionSet: &ec2VersionSet{Items: out}}, nil
	case "DeleteLaunchTemplate":
		lt, err := s.templateOf(f)
		if err != nil {
			return nil, err
		}
		delete(s.templates, lt.id)
		x := lt.xml()
		return &ec2Response{LaunchTemplate: &x}, nil
	case "DeleteLaunchTemplateVersions":
		lt, err := s.templateOf(f)
		if err != nil {
			return nil, err
		}
		versions := f.strs("LaunchTemplateVersion")
		if len(versions) == 0 {
			return nil, ec2Err("MissingParameter", "The request must contain the parameter LaunchTemplateVersion")
		}
		out := &ec2Response{Deleted: &ec2DeletedSet{}, NotDeleted: &ec2NotDeletedSet{}}
		for _, ver := range versions {
			n, perr := strconv.ParseInt(ver, 10, 64)
			switch {
			case perr != nil || lt.versions[n] == nil:
				out.NotDeleted.Items = append(out.NotDeleted.Items, ec2NotDeletedXML{LaunchTemplateID: lt.id, LaunchTemplateName: lt.name, VersionNumber: n,
					ResponseError: ec2ResponseErrorXML{Code: "launchTemplateVersionDoesNotExist", Message: "The specified launch template version does not exist."}})
			case n == lt.defaultVersion:
				out.NotDeleted.Items = append(out.NotDeleted.Items, ec2NotDeletedXML{LaunchTemplateID: lt.id, LaunchTemplateName: lt.name, VersionNumber: n,
					ResponseError: ec2ResponseErrorXML{Code: "unexpectedError", Message: "The default version of a launch template cannot be deleted; delete the launch template instead."}})
			default:
				delete(lt.versions, n)
				out.Deleted.Items = append(out.Deleted.Items, ec2DeletedXML{LaunchTemplateID: lt.id, LaunchTemplateName: lt.name, VersionNumber: n})
			}
		}
		return out, nil
	}
	return nil, ec2Err("InvalidAction", "The action %s is not valid for this web service.", action)
}

func errTemplateID(id string) *queryError {
	if !strings.HasPrefix(id, "lt-") {
		return ec2Err("InvalidLaunchTemplateId.Malformed", "The specified ID for the launch template (%s) is not valid. Launch template IDs start with 'lt-'.", id)
	}
	return ec2Err("InvalidLaunchTemplateId.NotFound", "The specified launch template, with template ID %s, does not exist.", id)
}

func (s *Server) templateNamed(name string) *launchTemplate {
	for _, lt := range s.templates {
		if lt.name == name {
			return lt
		}
	}
	return nil
}

func (s *Server) templatesByName() []*launchTemplate {
	out := slices.Collect(maps.Values(s.templates))
	slices.SortFunc(out, func(a, b *launchTemplate) int { return strings.Compare(a.name, b.name) })
	return out
}

// templateOf finds the template a request names by LaunchTemplateId or
// LaunchTemplateName (exactly one).
func (s *Server) templateOf(f form) (*launchTemplate, *queryError) {
	id, name := f.str("LaunchTemplateId"), f.str("LaunchTemplateName")
	switch {
	case id != "" && name != "":
		return nil, ec2Err("InvalidParameterCombination", "Specify either the launch template ID or the launch template name, but not both.")
	case id != "":
		if lt := s.templates[id]; lt != nil {
			return lt, nil
		}
		return nil, errTemplateID(id)
	case name != "":
		if lt := s.templateNamed(name); lt != nil {
			return lt, nil
		}
		return nil, ec2Err("InvalidLaunchTemplateName.NotFoundException", "The specified launch template, with template name %s, does not exist.", name)
	}
	return nil, ec2Err("MissingParameter", "The request must include either the launch template ID or the launch template name.")
}

// selectVersions resolves version specifiers (numbers, $Latest, $Default);
// none means all versions.
func (lt *launchTemplate) selectVersions(specs []string) ([]*templateVersion, *queryError) {
	if len(specs) == 0 {
		var out []*templateVersion
		for _, n := range slices.Sorted(maps.Keys(lt.versions)) {
			out = append(out, lt.versions[n])
		}
		return out, nil
	}
	var out []*templateVersion
	for _, spec := range specs {
		v, err := lt.version(spec)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (lt *launchTemplate) version(spec string) (*templateVersion, *queryError) {
	var n int64
	switch spec {
	case "$Latest", "":
		n = lt.latestVersion
	case "$Default":
		n = lt.defaultVersion
	default:
		var err error
		if n, err = strconv.ParseInt(spec, 10, 64); err != nil {
			return nil, ec2Err("InvalidLaunchTemplateId.VersionNotFound", "Could not find launch template version %s for launch template %s", spec, lt.id)
		}
	}
	if v := lt.versions[n]; v != nil {
		return v, nil
	}
	return nil, ec2Err("InvalidLaunchTemplateId.VersionNotFound", "Could not find launch template version %s for launch template %s", spec, lt.id)
}

func (s *Server) createLaunchTemplate(f form, now time.Time) (*launchTemplate, *queryError) {
	name := f.str("LaunchTemplateName")
	if name == "" {
		return nil, ec2Err("MissingParameter", "The request must contain the parameter LaunchTemplateName")
	}
	token := f.str("ClientToken")
	if token != "" {
		for _, lt := range s.templates {
			if lt.token == token {
				if lt.name != name {
					return nil, ec2Err("IdempotentParameterMismatch", "Client token %s was already used with different parameters.", token)
				}
				return lt, nil
			}
		}
	}
	if !templateNameRE.MatchString(name) {
		return nil, ec2Err("InvalidLaunchTemplateName.MalformedException", "A launch template name must be between 3 and 128 characters, and may contain letters, numbers, and the following characters: - ( ) . / _.")
	}
	if s.templateNamed(name) != nil {
		return nil, ec2Err("InvalidLaunchTemplateName.AlreadyExistsException", "Launch template name already in use.")
	}
	if !f.hasPrefix("LaunchTemplateData") {
		return nil, ec2Err("MissingParameter", "The request must contain the parameter LaunchTemplateData")
	}
	data, err := parseTemplateData(f, "LaunchTemplateData", templateData{})
	if err != nil {
		return nil, err
	}
	lt := &launchTemplate{
		id: "lt-" + shortHash(name, now.String(), newUUID()), name: name, token: token, createdAt: now,
		createdBy:      "arn:aws:iam::" + s.opts.AccountID + ":root",
		defaultVersion: 1, latestVersion: 1, tags: map[string]string{}, versions: map[int64]*templateVersion{},
	}
	for _, p := range f.list("TagSpecification") {
		if rt := f.str(p + ".ResourceType"); rt != "launch-template" {
			return nil, ec2Err("InvalidParameterValue", "'%s' is not a valid taggable resource type for this operation.", rt)
		}
		lt.tagOrder, lt.tags = f.tags(p + ".Tag")
	}
	v := &templateVersion{number: 1, description: f.str("VersionDescription"), createdAt: now, data: data}
	lt.versions[1] = v
	s.templates[lt.id] = lt
	return lt, nil
}

func (s *Server) createTemplateVersion(lt *launchTemplate, f form, now time.Time) (*templateVersion, *queryError) {
	token := f.str("ClientToken")
	signature := mustJSON(map[string][]string(f))
	if token != "" {
		for _, v := range lt.versions {
			if v.token != token {
				continue
			}
			if v.signature != signature {
				return nil, ec2Err("IdempotentParameterMismatch", "Client token %s was already used with different parameters.", token)
			}
			return v, nil
		}
	}
	if !f.hasPrefix("LaunchTemplateData") {
		return nil, ec2Err("MissingParameter", "The request must contain the parameter LaunchTemplateData")
	}
	base := templateData{}
	if src := f.str("SourceVersion"); src != "" {
		v, err := lt.version(src)
		if err != nil {
			return nil, err
		}
		base = v.data
	}
	data, err := parseTemplateData(f, "LaunchTemplateData", base)
	if err != nil {
		return nil, err
	}
	lt.latestVersion++
	v := &templateVersion{number: lt.latestVersion, description: f.str("VersionDescription"), createdAt: now, data: data, token: token, signature: signature}
	lt.versions[v.number] = v
	return v, nil
}

// parseTemplateData reads RequestLaunchTemplateData at prefix over base
// (a SourceVersion's data): a member given replaces base's.
func parseTemplateData(f form, prefix string, base templateData) (templateData, *queryError) {
	d := base
	if f.has(prefix + ".ImageId") {
		d.ImageID = f.str(prefix + ".ImageId")
		if !strings.HasPrefix(d.ImageID, "ami-") {
			return d, ec2Err("InvalidAMIID.Malformed", "Invalid id: \"%s\" (expecting \"ami-...\")", d.ImageID)
		}
	}
	if f.has(prefix + ".InstanceType") {
		d.InstanceType = f.str(prefix + ".InstanceType")
		if !strings.Contains(d.InstanceType, ".") {
			return d, ec2Err("InvalidParameterValue", "Invalid value '%s' for InstanceType.", d.InstanceType)
		}
	}
	if f.has(prefix + ".KeyName") {
		d.KeyName = f.str(prefix + ".KeyName")
	}
	if f.has(prefix + ".UserData") {
		d.UserData = f.str(prefix + ".UserData")
		if _, err := base64.StdEncoding.DecodeString(d.UserData); err != nil {
			return d, ec2Err("InvalidUserData.Malformed", "Invalid BASE64 encoding of user data.")
		}
	}
	if f.hasPrefix(prefix + ".SecurityGroupId") {
		d.SecurityGroupIDs = f.strs(prefix + ".SecurityGroupId")
	}
	if f.hasPrefix(prefix + ".BlockDeviceMapping") {
		d.BlockDevices = nil
		for _, p := range f.list(prefix + ".BlockDeviceMapping") {
			bd := blockDevice{DeviceName: f.str(p + ".DeviceName"), VolumeType: f.str(p + ".Ebs.VolumeType")}
			if f.has(p + ".Ebs.VolumeSize") {
				n, err := strconv.ParseInt(f.str(p+".Ebs.VolumeSize"), 10, 32)
				if err != nil || n < 1 || n > 16384 {
					return d, ec2Err("InvalidParameterValue", "Volume size %s is out of range [1, 16384] GiB.", f.str(p+".Ebs.VolumeSize"))
				}
				bd.VolumeSize = ptr(int32(n))
			}
			if f.has(p + ".Ebs.DeleteOnTermination") {
				bd.DeleteOnTermination = ptr(f.str(p+".Ebs.DeleteOnTermination") == "true")
			}
			if f.has(p + ".Ebs.Encrypted") {
				bd.Encrypted = ptr(f.str(p+".Ebs.Encrypted") == "true")
			}
			if bd.DeviceName == "" {
				return d, ec2Err("MissingParameter", "The request must contain the parameter BlockDeviceMapping.DeviceName")
			}
			d.BlockDevices = append(d.BlockDevices, bd)
		}
	}
	if f.hasPrefix(prefix + ".TagSpecification") {
		d.TagSpecs = nil
		for _, p := range f.list(prefix + ".TagSpecification") {
			ts := tagSpec{ResourceType: f.str(p + ".ResourceType")}
			switch ts.ResourceType {
			case "instance", "volume", "network-interface", "spot-instances-request":
			default:
				return d, ec2Err("InvalidParameterValue", "'%s' is not a valid taggable resource type for launch templates.", ts.ResourceType)
			}
			ts.Keys, ts.Tags = f.tags(p + ".Tag")
			d.TagSpecs = append(d.TagSpecs, ts)
		}
	}
	return d, nil
}

// XML shapes of the ec2query responses.

type ec2Response struct {
	XMLName                  xml.Name
	Xmlns                    string                `xml:"xmlns,attr"`
	RequestID                string                `xml:"requestId"`
	LaunchTemplate           *ec2LaunchTemplateXML `xml:"launchTemplate,omitempty"`
	LaunchTemplateVersion    *ec2VersionXML        `xml:"launchTemplateVersion,omitempty"`
	LaunchTemplates          *ec2LaunchTemplateSet `xml:"launchTemplates,omitempty"`
	LaunchTemplateVersionSet *ec2VersionSet        `xml:"launchTemplateVersionSet,omitempty"`
	Deleted                  *ec2DeletedSet        `xml:"successfullyDeletedLaunchTemplateVersionSet,omitempty"`
	NotDeleted               *ec2NotDeletedSet     `xml:"unsuccessfullyDeletedLaunchTemplateVersionSet,omitempty"`
}

type ec2TagXML struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

type ec2LaunchTemplateXML struct {
	CreateTime           string      `xml:"createTime"`
	CreatedBy            string      `xml:"createdBy"`
	DefaultVersionNumber int64       `xml:"defaultVersionNumber"`
	LatestVersionNumber  int64       `xml:"latestVersionNumber"`
	LaunchTemplateID     string      `xml:"launchTemplateId"`
	LaunchTemplateName   string      `xml:"launchTemplateName"`
	Tags                 []ec2TagXML `xml:"tagSet>item"`
}

type ec2LaunchTemplateSet struct {
	Items []ec2LaunchTemplateXML `xml:"item"`
}

type ec2EbsXML struct {
	DeleteOnTermination *bool  `xml:"deleteOnTermination,omitempty"`
	Encrypted           *bool  `xml:"encrypted,omitempty"`
	VolumeSize          *int32 `xml:"volumeSize,omitempty"`
	VolumeType          string `xml:"volumeType,omitempty"`
}

type ec2BlockDeviceXML struct {
	DeviceName string     `xml:"deviceName"`
	Ebs        *ec2EbsXML `xml:"ebs,omitempty"`
}

type ec2TagSpecXML struct {
	ResourceType string      `xml:"resourceType"`
	Tags         []ec2TagXML `xml:"tagSet>item"`
}

type ec2TemplateDataXML struct {
	BlockDevices     []ec2BlockDeviceXML `xml:"blockDeviceMappingSet>item"`
	ImageID          string              `xml:"imageId,omitempty"`
	InstanceType     string              `xml:"instanceType,omitempty"`
	KeyName          string              `xml:"keyName,omitempty"`
	SecurityGroupIDs []string            `xml:"securityGroupIdSet>item"`
	TagSpecs         []ec2TagSpecXML     `xml:"tagSpecificationSet>item"`
	UserData         string              `xml:"userData,omitempty"`
}

type ec2VersionXML struct {
	CreateTime         string             `xml:"createTime"`
	CreatedBy          string             `xml:"createdBy"`
	DefaultVersion     bool               `xml:"defaultVersion"`
	LaunchTemplateData ec2TemplateDataXML `xml:"launchTemplateData"`
	LaunchTemplateID   string             `xml:"launchTemplateId"`
	LaunchTemplateName string             `xml:"launchTemplateName"`
	VersionDescription string             `xml:"versionDescription,omitempty"`
	VersionNumber      int64              `xml:"versionNumber"`
}

type ec2VersionSet struct {
	Items []ec2VersionXML `xml:"item"`
}

type ec2DeletedXML struct {
	LaunchTemplateID   string `xml:"launchTemplateId"`
	LaunchTemplateName string `xml:"launchTemplateName"`
	VersionNumber      int64  `xml:"versionNumber"`
}

type ec2DeletedSet struct {
	Items []ec2DeletedXML `xml:"item"`
}

type ec2ResponseErrorXML struct {
	Code    string `xml:"code"`
	Message string `xml:"message"`
}

type ec2NotDeletedXML struct {
	LaunchTemplateID   string              `xml:"launchTemplateId"`
	LaunchTemplateName string              `xml:"launchTemplateName"`
	ResponseError      ec2ResponseErrorXML `xml:"responseError"`
	VersionNumber      int64               `xml:"versionNumber"`
}

type ec2NotDeletedSet struct {
	Items []ec2NotDeletedXML `xml:"item"`
}

func (lt *launchTemplate) xml() ec2LaunchTemplateXML {
	x := ec2LaunchTemplateXML{
		CreateTime: isoTime(lt.createdAt), CreatedBy: lt.createdBy,
		DefaultVersionNumber: lt.defaultVersion, LatestVersionNumber: lt.latestVersion,
		LaunchTemplateID: lt.id, LaunchTemplateName: lt.name,
	}
	for _, k := range lt.tagOrder {
		x.Tags = append(x.Tags, ec2TagXML{Key: k, Value: lt.tags[k]})
	}
	return x
}

func (lt *launchTemplate) versionXML(v *templateVersion) ec2VersionXML {
	d := v.data
	x := ec2VersionXML{
		CreateTime: isoTime(v.createdAt), CreatedBy: lt.createdBy,
		DefaultVersion: v.number == lt.defaultVersion, LaunchTemplateID: lt.id, LaunchTemplateName: lt.name,
		VersionDescription: v.description, VersionNumber: v.number,
		LaunchTemplateData: ec2TemplateDataXML{ImageID: d.ImageID, InstanceType: d.InstanceType, KeyName: d.KeyName,
			UserData: d.UserData, SecurityGroupIDs: d.SecurityGroupIDs},
	}
	for _, bd := range d.BlockDevices {
		b := ec2BlockDeviceXML{DeviceName: bd.DeviceName}
		if bd.VolumeSize != nil || bd.VolumeType != "" || bd.DeleteOnTermination != nil || bd.Encrypted != nil {
			b.Ebs = &ec2EbsXML{VolumeSize: bd.VolumeSize, VolumeType: bd.VolumeType, DeleteOnTermination: bd.DeleteOnTermination, Encrypted: bd.Encrypted}
		}
		x.LaunchTemplateData.BlockDevices = append(x.LaunchTemplateData.BlockDevices, b)
	}
	for _, ts := range d.TagSpecs {
		t := ec2TagSpecXML{ResourceType: ts.ResourceType}
		for _, k := range ts.Keys {
			t.Tags = append(t.Tags, ec2TagXML{Key: k, Value: ts.Tags[k]})
		}
		x.LaunchTemplateData.TagSpecs = append(x.LaunchTemplateData.TagSpecs, t)
	}
	return x
}

// LaunchTemplateData is a copy of the data of one launch template version.
type LaunchTemplateData struct {
	// ImageID, InstanceType and KeyName are as given.
	ImageID, InstanceType, KeyName string
	// UserData is decoded from the base64 the API carries.
	UserData string
	// VolumeSize is the size in GiB of the first block device, 0 if none.
	VolumeSize int32
	// ResourceTags maps a resource type ("instance", "volume") to the tags
	// its tag specification puts on it.
	ResourceTags map[string]map[string]string
}

// LaunchTemplateSnapshot is a copy of an EC2 launch template's emulated
// state.
type LaunchTemplateSnapshot struct {
	// ID and Name of the template.
	ID, Name string
	// DefaultVersion and LatestVersion are version numbers.
	DefaultVersion, LatestVersion int64
	// Tags are the template's own tags.
	Tags map[string]string
	// Versions maps version number to its data.
	Versions map[int64]LaunchTemplateData
}

// LaunchTemplate returns a snapshot of the launch template with the given
// ID or name, and whether it exists.
func (s *Server) LaunchTemplate(idOrName string) (LaunchTemplateSnapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lt := s.templates[idOrName]
	if lt == nil {
		lt = s.templateNamed(idOrName)
	}
	if lt == nil {
		return LaunchTemplateSnapshot{}, false
	}
	snap := LaunchTemplateSnapshot{ID: lt.id, Name: lt.name, DefaultVersion: lt.defaultVersion, LatestVersion: lt.latestVersion,
		Tags: copyMap(lt.tags), Versions: map[int64]LaunchTemplateData{}}
	for n, v := range lt.versions {
		d := LaunchTemplateData{ImageID: v.data.ImageID, InstanceType: v.data.InstanceType, KeyName: v.data.KeyName, ResourceTags: map[string]map[string]string{}}
		if b, err := base64.StdEncoding.DecodeString(v.data.UserData); err == nil {
			d.UserData = string(b)
		}
		if len(v.data.BlockDevices) > 0 && v.data.BlockDevices[0].VolumeSize != nil {
			d.VolumeSize = *v.data.BlockDevices[0].VolumeSize
		}
		for _, ts := range v.data.TagSpecs {
			d.ResourceTags[ts.ResourceType] = copyMap(ts.Tags)
		}
		snap.Versions[n] = d
	}
	return snap, true
}

// LaunchTemplateNames returns the names of all launch templates, sorted.
func (s *Server) LaunchTemplateNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, lt := range s.templatesByName() {
		out = append(out, lt.name)
	}
	return out
}

// resolveLaunchTemplate checks an EKS node group's launch template against
// the EC2 state, as EKS does, and fills in its name, ID and version number.
func (s *Server) resolveLaunchTemplate(req *wireLaunchTemplate) *APIError {
	var lt *launchTemplate
	switch {
	case req.ID != "":
		lt = s.templates[req.ID]
	case req.Name != "":
		lt = s.templateNamed(req.Name)
	}
	if lt == nil || (req.ID != "" && req.Name != "" && lt.name != req.Name) {
		return errInvalid("The launch template %s does not exist.", strings.TrimSpace(req.ID+" "+req.Name))
	}
	spec := req.Version
	if spec == "" {
		spec = "$Default"
	}
	v, err := lt.version(spec)
	if err != nil {
		return errInvalid("Launch template %s version %s does not exist.", lt.id, spec)
	}
	req.ID, req.Name, req.Version = lt.id, lt.name, fmt.Sprint(v.number)
	return nil
}
