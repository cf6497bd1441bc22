package ui

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/fedecdf/fedecdf/simulate"
)

// simulation is the JSON of a small plain simulation, run once.
var simulation = sync.OnceValues(func() ([]byte, error) {
	cfg := simulate.DefaultConfig()
	cfg.Parties, cfg.Backend, cfg.Bins, cfg.Bootstrap = 400, "plain", 32, 50
	r, err := simulate.Run(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	return json.Marshal(r)
})

// simulationParts returns the simulation's JSON and its ecdf, roc and
// first hosmer allocation objects: query --format json files' shapes.
func simulationParts(t *testing.T) (sim []byte, parts map[string][]byte) {
	t.Helper()
	sim, err := simulation()
	if err != nil {
		t.Fatal(err)
	}
	var top struct {
		ECDF, ROC json.RawMessage
		Hosmer    struct{ Allocations []json.RawMessage }
	}
	if err := json.Unmarshal(sim, &top); err != nil {
		t.Fatal(err)
	}
	return sim, map[string][]byte{"ecdf": top.ECDF, "roc": top.ROC, "calibration": top.Hosmer.Allocations[0]}
}

// ReadFile reads a simulate report and each query object, and refuses
// anything else with ErrFile.
func TestReadFile(t *testing.T) {
	sim, parts := simulationParts(t)
	for _, tc := range []struct {
		name string
		data []byte
		has  []string
	}{
		{"simulate", sim, Figures},
		{"query ecdf", parts["ecdf"], []string{"ecdf"}},
		{"query roc", parts["roc"], []string{"roc", "pr"}},
		{"query hosmer", parts["calibration"], []string{"calibration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ReadFile(tc.name, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			for _, fig := range Figures {
				want := strings.Contains(strings.Join(tc.has, " "), fig)
				if res.has(fig) != want {
					t.Errorf("has(%s) = %v, want %v", fig, res.has(fig), want)
				}
			}
		})
	}
	for _, bad := range []string{"", "[1]", `{"dataset": "x"}`, `{"thresholds": "no"}`, `{"fpr": [0, 1], "raw": {}, "order": "sklearn"}`} {
		if _, err := ReadFile("bad", []byte(bad)); !errors.Is(err, ErrFile) {
			t.Errorf("ReadFile(%q) = %v, want ErrFile", bad, err)
		}
	}
}

// The downloads of a file: its own JSON objects, CSV tables holding
// every point, charts that load nothing from elsewhere.
func TestDownloads(t *testing.T) {
	sim, parts := simulationParts(t)
	res, err := ReadFile("sim.json", sim)
	if err != nil {
		t.Fatal(err)
	}
	for _, fig := range Figures {
		t.Run(fig, func(t *testing.T) {
			var b bytes.Buffer
			if err := res.JSON(&b, fig); err != nil {
				t.Fatal(err)
			}
			want := parts[fig]
			if fig == "pr" {
				want = parts["roc"]
			}
			var got, exp any
			json.Unmarshal(b.Bytes(), &got)
			json.Unmarshal(want, &exp)
			if g, e := mustJSON(t, got), mustJSON(t, exp); g != e {
				t.Errorf("JSON download differs from the file's object")
			}
			b.Reset()
			if err := res.CSV(&b, fig); err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			points := map[string]int{"ecdf": len(res.ECDF.Thresholds), "roc": 2*len(res.ROC.FPR) + 2*len(res.ROC.Band95.FPR), "pr": len(res.ROC.Recall) + len(res.ROC.Raw.Recall), "calibration": len(res.Hosmer.Groups)}[fig]
			if len(rows) != 1+points {
				t.Errorf("CSV has %d rows, want a header and %d", len(rows), points)
			}
			b.Reset()
			c, err := res.Chart(fig)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Encode(&b, "svg"); err != nil {
				t.Fatal(err)
			}
			if ext := externalRefs(b.String()); len(ext) > 0 {
				t.Errorf("the SVG references %v", ext)
			}
		})
	}
	if _, err := res.Chart("nothing"); err == nil {
		t.Error("an unknown figure was drawn")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// externalRefs returns the URLs in s other than XML namespaces.
func externalRefs(s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?i)(?:https?:)?//[a-z0-9.-]+[^"' )<]*`).FindAllString(s, -1) {
		if !strings.HasPrefix(m, "http://www.w3.org/") {
			out = append(out, m)
		}
	}
	return out
}

// newFileServer serves the simulation file at /results/file-1 on an
// httptest server whose address the ui server answers.
func newFileServer(t *testing.T) (*httptest.Server, *Server) {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	s, err := New(Config{Addr: ts.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	sim, _ := simulationParts(t)
	if _, err := s.AddFile("sim.json", sim); err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s
	ts.Start()
	t.Cleanup(ts.Close)
	return ts, s
}

// The attacker's requests: another Host (DNS rebinding), a POST from
// another origin or with no Origin, a POST with no session or with
// another session's token — each refused with 403, nothing opened;
// the page's own POST is served.
func TestRequestChecks(t *testing.T) {
	ts, s := newFileServer(t)
	// A session and its token, as a page gives them.
	resp, err := http.Get(ts.URL + "/open")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Content-Security-Policy"); got != csp {
		t.Errorf("Content-Security-Policy %q, want %q", got, csp)
	}
	cookie := resp.Cookies()[0]
	token := s.token(cookie.Value)
	sim, _ := simulationParts(t)
	post := func(origin, host string, cookie *http.Cookie, token string) int {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("csrf", token)
		fw, _ := mw.CreateFormFile("file", "again.json")
		fw.Write(sim)
		mw.Close()
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/open", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if host != "" {
			req.Host = host
		}
		if cookie != nil {
			req.AddCookie(cookie)
		}
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	u, _ := url.Parse(ts.URL)
	other := &http.Cookie{Name: sessionCookie, Value: strings.Repeat("ab", 32)}
	for _, tc := range []struct {
		name, origin, host string
		cookie             *http.Cookie
		token              string
		want               int
	}{
		{"another Host", ts.URL, "attacker.example:" + u.Port(), cookie, token, http.StatusForbidden},
		{"cross-origin", "http://attacker.example", "", cookie, token, http.StatusForbidden},
		{"no Origin", "", "", cookie, token, http.StatusForbidden},
		{"null Origin", "null", "", cookie, token, http.StatusForbidden},
		{"no session", ts.URL, "", nil, token, http.StatusForbidden},
		{"no token", ts.URL, "", cookie, "", http.StatusForbidden},
		{"another session's token", ts.URL, "", other, token, http.StatusForbidden},
		{"the page's own", ts.URL, "", cookie, token, http.StatusSeeOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(s.files)
			if got := post(tc.origin, tc.host, tc.cookie, tc.token); got != tc.want {
				t.Errorf("status %d, want %d", got, tc.want)
			}
			opened := len(s.files) - before
			if want := map[bool]int{true: 1, false: 0}[tc.want == http.StatusSeeOther]; opened != want {
				t.Errorf("%d files opened, want %d", opened, want)
			}
		})
	}
}

// Without a deployment the deployment's pages lead to the file page,
// and an unknown result is a 404 page.
func TestFilesOnly(t *testing.T) {
	ts, _ := newFileServer(t)
	for path, want := range map[string]int{"/": http.StatusOK, "/releases": http.StatusOK, "/results/file-1": http.StatusOK, "/results/file-9": http.StatusNotFound, "/results/file-1/roc.txt": http.StatusNotFound, "/results/file-1/roc.svg": http.StatusOK} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
		if (path == "/" || path == "/releases") && resp.Request.URL.Path != "/open" {
			t.Errorf("GET %s ended at %s, want /open", path, resp.Request.URL.Path)
		}
	}
}

// A download: its type, its own CSP for an SVG, and an attachment
// when asked for.
func TestDownloadHeaders(t *testing.T) {
	ts, _ := newFileServer(t)
	for _, tc := range []struct{ path, ctype, csp, disposition string }{
		{"/results/file-1/roc.svg", "image/svg+xml", svgCSP, ""},
		{"/results/file-1/roc.svg?download=1", "image/svg+xml", svgCSP, `attachment; filename="roc.svg"`},
		{"/results/file-1/ecdf.png", "image/png", csp, ""},
		{"/results/file-1/calibration.json?download=1", "application/json", csp, `attachment; filename="calibration.json"`},
		{"/results/file-1/pr.csv", "text/csv; charset=utf-8", csp, ""},
		{"/results/file-1", "text/html; charset=utf-8", csp, ""},
	} {
		resp, err := http.Get(ts.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode != http.StatusOK || h.Get("Content-Type") != tc.ctype || h.Get("Content-Security-Policy") != tc.csp || h.Get("Content-Disposition") != tc.disposition {
			t.Errorf("GET %s: %d, type %q, CSP %q, disposition %q; want 200, %q, %q, %q", tc.path, resp.StatusCode,
				h.Get("Content-Type"), h.Get("Content-Security-Policy"), h.Get("Content-Disposition"), tc.ctype, tc.csp, tc.disposition)
		}
	}
}
