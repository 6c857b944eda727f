{{/* Chart name, overridable. */}}
{{- define "ccltune.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: release-chart, or the release name when it already contains the chart name. */}}
{{- define "ccltune.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "ccltune.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "ccltune.labels" -}}
helm.sh/chart: {{ include "ccltune.chart" . }}
{{ include "ccltune.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Controller selector labels (immutable once deployed: keep them minimal). */}}
{{- define "ccltune.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ccltune.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end }}

{{/* Labels on the Redis objects: like ccltune.labels, but the redis component. */}}
{{- define "ccltune.redisLabels" -}}
helm.sh/chart: {{ include "ccltune.chart" . }}
{{ include "ccltune.redisSelectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "ccltune.redisSelectorLabels" -}}
app.kubernetes.io/name: {{ include "ccltune.name" . }}-redis
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: redis
{{- end }}

{{- define "ccltune.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ccltune.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "ccltune.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The worker image: the same reference, with the -cuda tag suffix unless workerVariant is host. */}}
{{- define "ccltune.workerImage" -}}
{{- if eq .Values.image.workerVariant "cuda" }}
{{- printf "%s-cuda" (include "ccltune.image" .) }}
{{- else if eq .Values.image.workerVariant "host" }}
{{- include "ccltune.image" . }}
{{- else }}
{{- fail (printf "image.workerVariant must be cuda or host, not %q" .Values.image.workerVariant) }}
{{- end }}
{{- end }}

{{/* The Redis jobs use unless their spec names one. */}}
{{- define "ccltune.redisURL" -}}
{{- if .Values.redis.enabled }}
{{- printf "redis://%s-redis.%s.svc:6379/0" (include "ccltune.fullname" .) .Release.Namespace }}
{{- else }}
{{- required "redis.externalURL is required when redis.enabled is false" .Values.redis.externalURL }}
{{- end }}
{{- end }}

{{/* The Pushgateway tuning pods push to, unless their spec names one; empty: none. */}}
{{- define "ccltune.pushgatewayURL" -}}
{{- if .Values.metrics.pushgateway.enabled }}
{{- printf "http://%s-pushgateway.%s.svc:9091" (include "ccltune.fullname" .) .Release.Namespace }}
{{- else }}
{{- .Values.metrics.pushgateway.externalURL }}
{{- end }}
{{- end }}

{{/* Labels on the Pushgateway objects: like ccltune.labels, but the pushgateway component. */}}
{{- define "ccltune.pushgatewayLabels" -}}
helm.sh/chart: {{ include "ccltune.chart" . }}
{{ include "ccltune.pushgatewaySelectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "ccltune.pushgatewaySelectorLabels" -}}
app.kubernetes.io/name: {{ include "ccltune.name" . }}-pushgateway
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: pushgateway
{{- end }}
