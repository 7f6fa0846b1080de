{{/* The labels of every object of the release. */}}
{{- define "mgr.labels" -}}
app.kubernetes.io/name: clustersync-manager
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{/* The manager pods' selector. */}}
{{- define "mgr.selector" -}}
app.kubernetes.io/name: clustersync-manager
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* registry/repository:tag of clustersync's image. */}}
{{- define "mgr.image" -}}
{{- $i := .Values.image -}}
{{- if $i.registry -}}{{ $i.registry }}/{{- end -}}{{ $i.repository }}:{{ $i.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The URL agents reach the manager at. */}}
{{- define "mgr.externalURL" -}}
{{- .Values.externalURL | default (printf "https://%s.%s.svc" .Release.Name .Release.Namespace) -}}
{{- end -}}
