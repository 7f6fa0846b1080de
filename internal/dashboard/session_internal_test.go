package dashboard

import (
	"strings"
	"testing"
)

// What a user may paste at sign-in: a token, or a kubeconfig whose current
// user holds a token or an inline certificate; anything else is refused
// with what is missing.
func TestParseCredential(t *testing.T) {
	kubeconfig := func(user string) string {
		return `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://elsewhere.example:6443"}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
users:
- name: u
  user:
` + user
	}
	for _, tc := range []struct {
		name, pasted string
		want         credential
		err          string
	}{
		{name: "token", pasted: "  eyJhbGciOi.abc.def\n", want: credential{token: "eyJhbGciOi.abc.def"}},
		{name: "empty", pasted: " \n", err: "paste a bearer token or a kubeconfig"},
		{name: "kubeconfig token", pasted: kubeconfig("    token: tok-1\n"), want: credential{token: "tok-1"}},
		{name: "kubeconfig certificate", pasted: kubeconfig("    client-certificate-data: Y2VydA==\n    client-key-data: a2V5\n"),
			want: credential{cert: []byte("cert"), certKey: []byte("key")}},
		{name: "files", pasted: kubeconfig("    client-certificate: /home/me/.kube/me.crt\n    client-key: /home/me/.kube/me.key\n"),
			err: "keeps its credentials in files on your machine"},
		{name: "exec", pasted: kubeconfig("    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}\n"),
			err: "plugin that runs on your machine"},
		{name: "no credential", pasted: kubeconfig("    username: me\n"), err: `user "u" has no token and no client certificate`},
		{name: "missing context", pasted: strings.Replace(kubeconfig("    token: x\n"), "current-context: ctx", "current-context: other", 1),
			err: `current-context "other" is not among its contexts`},
		{name: "not yaml", pasted: "a: [\nb", err: "not a token, and not a kubeconfig"},
	} {
		got, err := parseCredential(tc.pasted)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err == "" && (got.token != tc.want.token || string(got.cert) != string(tc.want.cert) || string(got.certKey) != string(tc.want.certKey)):
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
