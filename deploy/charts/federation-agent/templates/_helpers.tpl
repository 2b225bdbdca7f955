{{/* The prefix of every object's name: the release name unless overridden. */}}
{{- define "agent.fullname" -}}
{{- $name := default .Release.Name .Values.fullnameOverride -}}
{{- if gt (len $name) 52 -}}
{{- fail (printf "the release name (or fullnameOverride) %q is longer than 52 characters: {{fullname}}-credential must stay a DNS label" $name) -}}
{{- end -}}
{{- $name -}}
{{- end -}}

{{/* Labels of every object; kubefed unjoin deletes the agent by them. */}}
{{- define "agent.labels" -}}
{{ include "agent.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
federation.k8s.io/agent-cluster: {{ .Values.cluster | quote }}
federation.k8s.io/agent-federation: {{ .Values.federationName | quote }}
{{- end -}}

{{/* The labels the agent's pod is selected by. */}}
{{- define "agent.selectorLabels" -}}
app.kubernetes.io/name: federation-agent
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "agent.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "agent.credentialSecret" -}}
{{ include "agent.fullname" . }}-credential
{{- end -}}

{{/* Checks of values that the schema cannot express. */}}
{{- define "agent.validate" -}}
{{- $_ := required "cluster is required: the member's Cluster name at the federation" .Values.cluster -}}
{{- $_ := required "federationName is required: the federation's name, as its join account federation-NAME" .Values.federationName -}}
{{- if not .Values.federation.addresses -}}
{{- fail "federation.addresses is required: the https:// addresses of the federation's apiservers" -}}
{{- end -}}
{{- if eq (empty .Values.federation.ca) (empty .Values.federation.caCertHash) -}}
{{- fail "give exactly one of federation.ca (the federation's CA, PEM) and federation.caCertHash (sha256:HASH)" -}}
{{- end -}}
{{- $_ := required "memberCredential.secretName is required: the Secret with the token of the join account (kubefed join makes it)" .Values.memberCredential.secretName -}}
{{- end -}}
