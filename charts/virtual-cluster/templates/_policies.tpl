{{/*
Whether the ResourceQuota is created: policies.resourceQuota.enabled true,
or auto while policies.limitRange.enabled is not false. The same rule as
config.ResourceQuota.On (a Go test compares the two).
*/}}
{{- define "vc.resourceQuota.on" -}}
{{- $p := .Values.policies -}}
{{- $self := toString $p.resourceQuota.enabled -}}
{{- if or (eq $self "true") (and (eq $self "auto") (ne (toString $p.limitRange.enabled) "false")) -}}
true
{{- end -}}
{{- end -}}

{{/*
Whether the LimitRange is created: policies.limitRange.enabled true, or auto
while policies.resourceQuota.enabled is not false (config.LimitRange.On).
*/}}
{{- define "vc.limitRange.on" -}}
{{- $p := .Values.policies -}}
{{- $self := toString $p.limitRange.enabled -}}
{{- if or (eq $self "true") (and (eq $self "auto") (ne (toString $p.resourceQuota.enabled) "false")) -}}
true
{{- end -}}
{{- end -}}

{{/*
The metadata labels and annotations of a policy object: the release's
labels (which win over the user's of the same key, so the object stays
recognisable as the release's) plus the user's labels, and the user's
annotations over controlPlane.advanced.globalMetadata's. Called with
(list $ .Values.policies.X).
*/}}
{{- define "vc.policyMeta" -}}
{{- $ctx := index . 0 -}}
{{- $p := index . 1 -}}
labels:
  {{- merge (include "vc.labels" $ctx | fromYaml) ($p.labels | default dict) | toYaml | nindent 2 }}
{{- with include "vc.annotations" (list $ctx $p.annotations) }}
annotations:
  {{- . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The labels the syncer puts on every host pod of the tenant. */}}
{{- define "vc.tenantPods" -}}
vcluster.loft.sh/managed-by: {{ .Release.Name }}
{{- end -}}
