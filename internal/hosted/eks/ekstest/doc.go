// Package ekstest is an in-process emulator of the Amazon EKS control-plane
// API, for testing clustersync's EKS operator with the real aws-sdk-go-v2 eks
// client: start it with New, and point the client at Server.URL with
// eks.Options.BaseEndpoint (static credentials, any region). It speaks the
// EKS REST-JSON protocol (paths, lowerCamel JSON members, epoch-second
// timestamps, errors as X-Amzn-ErrorType header + {"message": ...} body with
// the shape's HTTP status) for clusters (create, describe, list with
// pagination, delete, update-config for endpoint access / logging / subnets,
// version upgrades of one minor at a time), updates (list, describe, with
// nodegroupName/addonName scoping), managed node groups (create, describe,
// list, delete, update-config for scaling and labels, update-version),
// add-ons (create, describe, list, delete) and tags (tag, untag, list).
// Resources move CREATING→ACTIVE, DELETING→gone and updates
// InProgress→Successful after Options.CreateDelay/DeleteDelay/UpdateDelay,
// measured with the injectable clock Options.Now and evaluated lazily on
// every request or Go API call, so tests advance a fake clock instead of
// sleeping; an update changes the resource only when it succeeds, and the
// cluster (or node group) is UPDATING meanwhile. Conflicts follow EKS: a
// second update while one is in progress and deleting a cluster that still
// has node groups fail with ResourceInUseException (409), creating a node
// group on a cluster that is not ACTIVE fails with InvalidRequestException
// (400, "Cluster '<name>' is not in ACTIVE status", as EKS answers), and
// no-op endpoint/logging updates fail with InvalidParameterException as EKS
// does (so does mixing endpoint and logging changes in one call). Chosen
// where EKS is not documented: DeleteCluster is refused with
// ResourceInUseException while the cluster is CREATING or updating, and
// repeating a delete of a DELETING resource returns it again (200). Node
// group updates and DescribeUpdate/ListUpdates for them need the
// nodegroupName query, as in EKS. Create and update calls honour clientRequestToken, so SDK retries are
// idempotent. The console API (ConsoleSetEndpointAccess, ConsoleUpgrade,
// ConsoleScaleNodegroup, ... and ImportCluster) changes state the way a human
// in the AWS console would, outside clustersync; FailNext injects errors
// such as throttling for the next n calls of an operation, FailUpdates
// makes the next updates end Failed (unapplied, with an error detail);
// Calls counts API
// calls per operation and Cluster returns a snapshot for assertions. Not
// emulated: authentication and SigV4 checks (any credentials are accepted),
// Fargate profiles, access entries, pod identity, identity providers,
// encryption association, insights, capabilities, UpdateAddon, add-on
// versions/compatibility, CancelUpdate, failed or degraded resource
// states (nothing fails unless injected), real networking (VPC and security-group IDs
// are derived hashes) and the Kubernetes API itself (the endpoint is just the
// URL chosen by Options.EndpointFor).
//
// The same server and URL also emulate the CloudFormation and EC2 calls of
// the EKS operator, so that one BaseEndpoint serves all of AWS: a form
// POSTed to "/" (the AWS query protocols; Version 2010-05-15 is
// CloudFormation, 2016-11-15 EC2) is answered in XML, awsquery style
// (<ActionResult>, errors in <ErrorResponse><Error>) or ec2query style (no
// result wrapper, <requestId>, errors in <Response><Errors><Error>).
// CloudFormation: CreateStack, DescribeStacks (by name or stack ID; a
// deleted stack only by ID), DeleteStack. Templates must be JSON; the
// emulator checks references (Ref, Fn::GetAtt, Fn::Sub, DependsOn),
// parameters and the IAM capabilities, gives every resource a physical ID
// (vpc-, subnet-, sg-... for EC2 types, "<stack>-<logical>-<suffix>" IAM
// names with their ARNs) and evaluates Outputs (literals, Ref, Fn::GetAtt,
// Fn::Join, Fn::Sub; other functions are refused with a ValidationError).
// Stacks go CREATE_IN_PROGRESS → CREATE_COMPLETE after
// Options.StackCreateDelay (or, after FailStackCreate, ROLLBACK_COMPLETE /
// CREATE_FAILED with the given reason) and DELETE_IN_PROGRESS → gone after
// Options.StackDeleteDelay; a stack whose subnets, security groups or VPC
// an EKS cluster still uses ends DELETE_FAILED instead, and an EKS cluster
// created on a stack's subnets reports that stack's VPC. EC2:
// CreateLaunchTemplate, CreateLaunchTemplateVersion (with SourceVersion),
// DescribeLaunchTemplates, DescribeLaunchTemplateVersions (numbers,
// $Latest, $Default), DeleteLaunchTemplate and DeleteLaunchTemplateVersions
// (the default version cannot be deleted), honouring ClientToken; of the
// launch template data it keeps image, instance type, key name, user data
// (base64, checked), block device mappings, security group IDs and tag
// specifications. EKS CreateNodegroup and UpdateNodegroupVersion resolve a
// launch template against this EC2 state (an unknown template or version is
// an InvalidParameterException) and report its ID, name and version
// number. FailNext and Calls cover these operations too. Not emulated:
// change sets, stack updates, stack events, template URLs, YAML templates,
// resource properties (never evaluated), IAM, and EC2 beyond launch
// templates.
package ekstest
