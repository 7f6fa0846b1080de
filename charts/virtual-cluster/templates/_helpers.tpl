{{/* The labels of every object of the release. */}}
{{- define "vc.labels" -}}
app: vcluster
release: {{ .Release.Name }}
app.kubernetes.io/name: virtual-cluster
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
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

{{/* registry/repository:tag of clustersync's image. */}}
{{- define "vc.image" -}}
{{- $i := .Values.controlPlane.statefulSet.image -}}
{{- if $i.registry -}}{{ $i.registry }}/{{- end -}}{{ $i.repository }}:{{ $i.tag | default .Chart.AppVersion }}
{{- end -}}

{{/*
Whether etcd's data goes on a PersistentVolumeClaim: volumeClaim.enabled
true, or "auto" with a storageClass set or a default StorageClass in the
host (read with lookup; `helm template` sees none, so it renders an emptyDir).
*/}}
{{- define "vc.persistent" -}}
{{- $vc := .Values.controlPlane.statefulSet.persistence.volumeClaim -}}
{{- $enabled := toString $vc.enabled -}}
{{- if eq $enabled "true" -}}
true
{{- else if eq $enabled "auto" -}}
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
IP, a locked-down security context, the data, config and /tmp volumes. */}}
{{- define "vc.container" -}}
{{- /* A container that fails says why in its status (its last log lines),
  which `virtual create` prints instead of waiting out its timeout. */}}
terminationMessagePolicy: FallbackToLogsOnError
env:
  - name: POD_NAMESPACE
    valueFrom:
      fieldRef:
        fieldPath: metadata.namespace
  - name: POD_IP
    valueFrom:
      fieldRef:
        fieldPath: status.podIP
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: [ALL]
volumeMounts:
  - name: data
    mountPath: /data
  - name: config
    mountPath: /etc/clustersync
    readOnly: true
  - name: tmp
    mountPath: /tmp
{{- end -}}
