{{/* A kubeconfig of one user: (dict "server" URL "ca" PEM "user" NAME "auth" (dict ...)). */}}
{{- define "federation.kubeconfig" -}}
apiVersion: v1
kind: Config
clusters:
  - name: federation
    cluster:
      server: {{ .server }}
      certificate-authority-data: {{ .ca | b64enc }}
users:
  - name: {{ .user }}
    user:
      {{- range $key, $value := .auth }}
      {{ $key }}: {{ $value }}
      {{- end }}
contexts:
  - name: federation
    context:
      cluster: federation
      user: {{ .user }}
current-context: federation
{{ end -}}

{{/* The apiserver's EncryptionConfiguration: Secrets sealed with the
secretbox key (base64 of 32 bytes), identity last so values stored in
clear stay readable. */}}
{{- define "federation.encryptionConfig" -}}
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - secretbox:
          keys:
            - name: key1
              secret: {{ . }}
      - identity: {}
{{ end -}}
