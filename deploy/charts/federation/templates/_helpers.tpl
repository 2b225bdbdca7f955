{{/* The prefix of every object's name: the release name unless overridden. */}}
{{- define "federation.fullname" -}}
{{- $name := default .Release.Name .Values.fullnameOverride -}}
{{- if gt (len $name) 40 -}}
{{- fail (printf "the release name (or fullnameOverride) %q is longer than 40 characters: {{fullname}}-controller-manager must stay a DNS label" $name) -}}
{{- end -}}
{{- $name -}}
{{- end -}}

{{/* Labels of every object; pass (dict "ctx" $ "component" "apiserver"). */}}
{{- define "federation.labels" -}}
{{ include "federation.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Values.image.tag | default .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
{{- end -}}

{{/* The labels a component's pods are selected by. */}}
{{- define "federation.selectorLabels" -}}
app.kubernetes.io/name: federation
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "federation.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* Where the components listen: internalHost, or every address. */}}
{{- define "federation.listenHost" -}}
{{ .Values.internalHost | default "0.0.0.0" }}
{{- end -}}

{{- define "federation.credentialsSecret" -}}
{{ .Values.certificates.existingSecret | default (printf "%s-credentials" (include "federation.fullname" .)) }}
{{- end -}}

{{/* Service DNS name of a component: (dict "ctx" $ "component" "apiserver"). */}}
{{- define "federation.serviceHost" -}}
{{ include "federation.fullname" .ctx }}-{{ .component }}.{{ .ctx.Release.Namespace }}.svc
{{- end -}}

{{/* The apiserver's URL inside the cluster (the controller manager's kubeconfig). */}}
{{- define "federation.apiserverURL" -}}
{{- if .Values.internalHost -}}
https://{{ .Values.internalHost }}:{{ .Values.apiserver.securePort }}
{{- else -}}
https://{{ include "federation.serviceHost" (dict "ctx" . "component" "apiserver") }}:{{ .Values.apiserver.service.port }}
{{- end -}}
{{- end -}}

{{/* The apiserver's URL for people: the advertised address, else as inside. */}}
{{- define "federation.apiserverExternalURL" -}}
{{- if .Values.apiserver.advertiseAddress -}}
https://{{ .Values.apiserver.advertiseAddress }}:{{ .Values.apiserver.service.port }}
{{- else -}}
{{ include "federation.apiserverURL" . }}
{{- end -}}
{{- end -}}

{{/* Whether the chart runs etcd ("true" or ""). */}}
{{- define "federation.ownEtcd" -}}
{{- if not .Values.etcd.servers -}}true{{- end -}}
{{- end -}}

{{/* The host of etcd member i: (dict "ctx" $ "i" 0). */}}
{{- define "federation.etcdMemberHost" -}}
{{- if .ctx.Values.internalHost -}}
{{ .ctx.Values.internalHost }}
{{- else -}}
{{ include "federation.fullname" .ctx }}-etcd-{{ .i }}.{{ include "federation.fullname" .ctx }}-etcd.{{ .ctx.Release.Namespace }}.svc
{{- end -}}
{{- end -}}

{{/* etcd's client URLs, comma separated: the chart's members or etcd.servers. */}}
{{- define "federation.etcdServers" -}}
{{- if .Values.etcd.servers -}}
{{ join "," .Values.etcd.servers }}
{{- else -}}
{{- $urls := list -}}
{{- range $i := until (int .Values.etcd.replicas) -}}
{{- $urls = append $urls (printf "https://%s:%v" (include "federation.etcdMemberHost" (dict "ctx" $ "i" $i)) $.Values.etcd.clientPort) -}}
{{- end -}}
{{ join "," $urls }}
{{- end -}}
{{- end -}}

{{/* Whether etcd is reached over TLS with the credentials' etcd client certificate. */}}
{{- define "federation.etcdTLS" -}}
{{- $tls := true -}}
{{- range .Values.etcd.servers -}}
{{- if not (hasPrefix "https://" .) -}}{{- $tls = false -}}{{- end -}}
{{- end -}}
{{- if $tls -}}true{{- end -}}
{{- end -}}

{{/* host:port of the federation DNS server for members' cluster DNS. */}}
{{- define "federation.dnsAddress" -}}
{{- if .Values.dns.advertiseAddress -}}
{{ .Values.dns.advertiseAddress }}
{{- else if .Values.internalHost -}}
{{ .Values.internalHost }}:{{ .Values.dns.port }}
{{- else -}}
{{ include "federation.serviceHost" (dict "ctx" . "component" "dns") }}:{{ .Values.dns.service.port }}
{{- end -}}
{{- end -}}

{{/* The DNS zone with its final dot; fails when DNS is on without one. */}}
{{- define "federation.dnsZone" -}}
{{- $zone := required "dns.zone is required when dns.enabled is true (e.g. --set dns.zone=example.com.)" .Values.dns.zone -}}
{{ trimSuffix "." $zone }}.
{{- end -}}

{{/* Checks of values that the schema cannot express. */}}
{{- define "federation.validate" -}}
{{- if and .Values.internalHost (include "federation.ownEtcd" .) (gt (int .Values.etcd.replicas) 1) -}}
{{- fail "etcd.replicas must be 1 with internalHost: every member would listen on the same host and ports" -}}
{{- end -}}
{{- if .Values.dns.enabled -}}
{{- $_ := include "federation.dnsZone" . -}}
{{- end -}}
{{- end -}}

{{/* A container's probe over HTTP(S) on port, at path. */}}
{{- define "federation.httpProbe" -}}
httpGet:
  path: {{ .path }}
  port: {{ .port }}
  scheme: {{ .scheme | default "HTTP" }}
  {{- with .ctx.Values.internalHost }}
  host: {{ . }}
  {{- end }}
{{- end -}}

{{/* Pod-level settings every component shares. */}}
{{- define "federation.podSpec" -}}
automountServiceAccountToken: false
enableServiceLinks: false
{{- if .Values.hostNetwork }}
hostNetwork: true
dnsPolicy: ClusterFirstWithHostNet
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end -}}

{{/* Spread a component's pods over nodes when it can: (dict "ctx" $ "component" "apiserver"). */}}
{{- define "federation.affinity" -}}
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- include "federation.selectorLabels" . | nindent 14 }}
{{- end -}}

{{/* The credentials Secret's keys a component mounts: (dict "ctx" $ "keys" (list ...)). */}}
{{- define "federation.credentialsVolume" -}}
- name: credentials
  secret:
    secretName: {{ include "federation.credentialsSecret" .ctx }}
    defaultMode: 0440
    items:
      {{- range .keys }}
      - {key: {{ . }}, path: {{ . }}}
      {{- end }}
{{- end -}}
