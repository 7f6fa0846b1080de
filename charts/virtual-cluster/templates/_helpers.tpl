{{/* The labels of every object of the release. */}}
{{- define "vc.labels" -}}
app: vcluster
release: {{ .Release.Name }}
app.kubernetes.io/name: virtual-cluster
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{/* The control plane pod's host ServiceAccount:
controlPlane.advanced.serviceAccount.name, else vc-NAME. */}}
{{- define "vc.serviceAccountName" -}}
{{- .Values.controlPlane.advanced.serviceAccount.name | default (printf "vc-%s" .Release.Name) -}}
{{- end -}}

{{/* The annotations of an object of the chart, (list $ OWN): OWN (a map, may
be nil) over controlPlane.advanced.globalMetadata.annotations, as YAML;
empty when there are none. */}}
{{- define "vc.annotations" -}}
{{- $all := merge (deepCopy (index . 1 | default dict)) ((index . 0).Values.controlPlane.advanced.globalMetadata.annotations | default dict) -}}
{{- with $all }}{{ toYaml . }}{{ end -}}
{{- end -}}

{{/* The labels of the file for an object of the chart, (list MAP KEY...):
MAP without vc.labels' keys (config.StatefulSetLabels, which Values refuses;
left out here for helm install) and the further KEYs, as YAML. */}}
{{- define "vc.userLabels" -}}
{{- $labels := deepCopy (first . | default dict) -}}
{{- range concat (list "app" "release" "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/managed-by" "helm.sh/chart") (rest .) -}}
{{- $_ := unset $labels . -}}
{{- end -}}
{{- with $labels }}{{ toYaml . }}{{ end -}}
{{- end -}}

{{/* The control plane pod's selector (vCluster's app/release labels). */}}
{{- define "vc.selector" -}}
app: vcluster
release: {{ .Release.Name }}
{{- end -}}

{{/* "true" when the control plane runs kube-scheduler:
controlPlane.advanced.virtualScheduler.enabled or vCluster's other spelling,
controlPlane.distro.k8s.scheduler.enabled (config.Config.VirtualScheduler). */}}
{{- define "vc.virtualScheduler" -}}
{{- or .Values.controlPlane.advanced.virtualScheduler.enabled (dig "distro" "k8s" "scheduler" "enabled" false .Values.controlPlane) -}}
{{- end -}}

{{/* registry/repository:tag of clustersync's image; vCluster's image
(config.VClusterImages, _vcluster_defaults.tpl; also behind a registry host
in the repository, as config.imagePathOf reads it) means clustersync's. */}}
{{- define "vc.image" -}}
{{- $i := .Values.controlPlane.statefulSet.image -}}
{{- $path := $i.repository -}}
{{- $parts := splitList "/" $i.repository -}}
{{- if and (gt (len $parts) 1) (or (contains "." (first $parts)) (contains ":" (first $parts)) (eq (first $parts) "localhost")) -}}
{{- $path = join "/" (rest $parts) -}}
{{- end -}}
{{- if has $path (include "vc.vclusterImages" . | fromJsonArray) -}}
{{- $i = get (include "vc.ownDefaults" . | fromJson) "controlPlane.statefulSet.image" -}}
{{- end -}}
{{- $registry := .Values.controlPlane.advanced.defaultImageRegistry | default $i.registry -}}
{{- if $registry -}}{{ $registry }}/{{- end -}}{{ $i.repository }}:{{ $i.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The value of a key of config.VClusterDefaultMeansOurs, (list $ "a.b.c"),
as JSON: the values', or clustersync's default when it is one of vCluster's
defaults (_vcluster_defaults.tpl), as config.Parse takes it. */}}
{{- define "vc.own" -}}
{{- $root := index . 0 -}}
{{- $key := index . 1 -}}
{{- $v := $root.Values -}}
{{- range splitList "." $key -}}
{{- if kindIs "map" $v -}}{{- $v = get $v . -}}{{- else -}}{{- $v = "" -}}{{- end -}}
{{- end -}}
{{- if has (toJson $v) (get (include "vc.vclusterDefaults" $root | fromJson) $key) -}}
{{- get (include "vc.ownDefaults" $root | fromJson) $key | toJson -}}
{{- else -}}
{{- toJson $v -}}
{{- end -}}
{{- end -}}

{{/*
Whether etcd's data goes on a PersistentVolumeClaim: volumeClaim.enabled
true, or "auto" with no dataVolume and a storageClass set or a default
StorageClass in the host (read with lookup; `helm template` sees none, so
it renders an emptyDir).
*/}}
{{- define "vc.persistent" -}}
{{- $vc := .Values.controlPlane.statefulSet.persistence.volumeClaim -}}
{{- $enabled := toString $vc.enabled -}}
{{- if eq $enabled "true" -}}
true
{{- else if and (eq $enabled "auto") (not .Values.controlPlane.statefulSet.persistence.dataVolume) -}}
{{- if $vc.storageClass -}}
true
{{- else -}}
{{- $default := false -}}
{{- range (lookup "storage.k8s.io/v1" "StorageClass" "" "").items | default list -}}
{{- if eq (dig "metadata" "annotations" "storageclass.kubernetes.io/is-default-class" "" .) "true" -}}
{{- $default = true -}}
{{- end -}}
{{- end -}}
{{- if $default }}true{{ end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* What every container of the control plane pod has: the pod's namespace and
IP and controlPlane.statefulSet.env, its workingDir, a locked-down security
context under controlPlane.statefulSet.security.containerSecurityContext,
the data, config and /tmp volumes and persistence.addVolumeMounts (the
names and paths config.ControlPlaneEnv and config.ControlPlaneVolumes
list). */}}
{{- define "vc.container" -}}
{{- $sts := .Values.controlPlane.statefulSet -}}
{{- /* A container that fails says why in its status (its last log lines),
  which `virtual create` prints instead of waiting out its timeout. */}}
terminationMessagePolicy: FallbackToLogsOnError
{{- with $sts.workingDir }}
workingDir: {{ . }}
{{- end }}
env:
  - name: POD_NAMESPACE
    valueFrom:
      fieldRef:
        fieldPath: metadata.namespace
  - name: POD_IP
    valueFrom:
      fieldRef:
        fieldPath: status.podIP
  {{- with $sts.env }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
securityContext:
  {{- $ours := dict "allowPrivilegeEscalation" false "readOnlyRootFilesystem" true "capabilities" (dict "drop" (list "ALL")) }}
  {{- merge (include "vc.own" (list . "controlPlane.statefulSet.security.containerSecurityContext") | fromJson) $ours | toYaml | nindent 2 }}
volumeMounts:
  - name: data
    mountPath: /data
  - name: config
    mountPath: /etc/clustersync
    readOnly: true
  - name: tmp
    mountPath: /tmp
  {{- with $sts.persistence.addVolumeMounts }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* The startup probe of a container whose component first waits for
kube-apiserver (`clustersync virtual component`, the syncer): (list path
port scheme), scheme "" for HTTP. It allows 5 minutes before the kubelet
restarts the container; its liveness and readiness probes count from its
first success. */}}
{{- define "vc.waitingStartupProbe" -}}
startupProbe:
  httpGet: {path: {{ index . 0 }}, port: {{ index . 1 }}{{ with index . 2 }}, scheme: {{ . }}{{ end }}}
  periodSeconds: 1
  failureThreshold: 300
{{- end -}}

{{/* The kube-apiserver container's probe (list $ "livenessProbe" "/livez"):
controlPlane.statefulSet.probes.NAME's timing, nothing when it is off. */}}
{{- define "vc.probe" -}}
{{- $root := index . 0 -}}
{{- $name := index . 1 -}}
{{- $p := include "vc.own" (list $root (printf "controlPlane.statefulSet.probes.%s" $name)) | fromJson -}}
{{- if $p.enabled -}}
{{ $name }}:
  httpGet: {path: {{ index . 2 }}, port: 8443, scheme: HTTPS}
  {{- range $field := list "initialDelaySeconds" "timeoutSeconds" "periodSeconds" "failureThreshold" }}
  {{- with get $p $field }}
  {{ $field }}: {{ . }}
  {{- end }}
  {{- end }}
{{- end }}
{{- end -}}

{{/* A Role vc-NAME-SUFFIX with rules in host namespace .namespace other
than the release's, and its RoleBinding to the control plane's
ServiceAccount: a dict of root (the top context), namespace, suffix,
comment (the lines above the Role, "# " added to the first) and rules. */}}
{{- define "vc.otherNamespaceRole" -}}
{{- $r := .root }}
---
# {{ .comment }}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: vc-{{ $r.Release.Name }}-{{ .suffix }}
  namespace: {{ .namespace }}
  labels:
    {{- include "vc.labels" $r | nindent 4 }}
rules:
  {{- toYaml .rules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: vc-{{ $r.Release.Name }}-{{ .suffix }}
  namespace: {{ .namespace }}
  labels:
    {{- include "vc.labels" $r | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: vc-{{ $r.Release.Name }}-{{ .suffix }}
subjects:
  - kind: ServiceAccount
    name: {{ include "vc.serviceAccountName" $r }}
    namespace: {{ $r.Release.Namespace }}
{{- end -}}
