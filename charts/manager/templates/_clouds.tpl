{{- /* Generated from the table of clouds (internal/hosted/clouds) by `go generate ./internal/hosted/clouds`; do not edit. */ -}}
{{- define "mgr.cloudArgs" -}}
- --eks-refresh={{ .Values.eks.refresh }}
- --eks-poll={{ .Values.eks.poll }}
{{- with .Values.eks.endpoint }}
- --eks-endpoint={{ . }}
{{- end }}
- --aks-refresh={{ .Values.aks.refresh }}
- --aks-poll={{ .Values.aks.poll }}
{{- with .Values.aks.endpoint }}
- --aks-endpoint={{ . }}
{{- end }}
- --gke-refresh={{ .Values.gke.refresh }}
- --gke-poll={{ .Values.gke.poll }}
{{- with .Values.gke.endpoint }}
- --gke-endpoint={{ . }}
{{- end }}
{{- end }}
