package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// externalJS lists, in the open page, every URL that is not of the
// page's own origin: attributes src, href and action, resources loaded,
// url() in style attributes and style sheets, and any script element.
const externalJS = `(() => {
  const o = location.origin, bad = [];
  for (const e of document.querySelectorAll('[src],[href],[action],[srcset],[poster],[data]'))
    for (const a of ['src', 'href', 'action', 'srcset', 'poster', 'data']) {
      const v = e.getAttribute(a);
      if (v !== null && new URL(v, location.href).origin !== o) bad.push(a + '=' + v);
    }
  for (const r of performance.getEntriesByType('resource'))
    if (new URL(r.name).origin !== o) bad.push('loaded ' + r.name);
  for (const e of document.querySelectorAll('[style]'))
    if (/url\(/i.test(e.getAttribute('style'))) bad.push('style ' + e.getAttribute('style'));
  for (const s of document.styleSheets) {
    if (s.href && new URL(s.href).origin !== o) bad.push('sheet ' + s.href);
    for (const r of s.cssRules) if (/url\(|@import/i.test(r.cssText)) bad.push('css ' + r.cssText);
  }
  if (document.scripts.length) bad.push(document.scripts.length + ' script elements');
  return bad;
})()`

// noExternal fails the test if the open page references anything not
// served by its own origin.
func noExternal(t *testing.T, b *browser, page string) {
	t.Helper()
	if bad := eval[[]string](t, b, externalJS); len(bad) > 0 {
		t.Errorf("page %s references outside its origin: %v", page, bad)
	}
}

// epsilonIn reads the number after "ε = " in s.
func epsilonIn(t *testing.T, s string) float64 {
	t.Helper()
	m := regexp.MustCompile(`ε = ([-0-9.e+]+)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no ε in %q", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// pageValues returns the exact values of the numbers shown in the
// element of id (the value attributes of its data elements), and its
// text.
func pageValues(t *testing.T, b *browser, id string) ([]float64, string) {
	t.Helper()
	text := b.text(t, id)
	var out []float64
	for _, v := range eval[[]string](t, b, `Array.from(document.querySelectorAll('#`+id+` data')).map(e => e.value)`) {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("#%s: value %q: %v", id, v, err)
		}
		out = append(out, x)
	}
	return out, text
}

// sameNumbers fails unless the numbers of the element of id are exactly
// want, query's JSON numbers (JSON null: the page says "none").
func sameNumbers(t *testing.T, b *browser, id string, want ...any) {
	t.Helper()
	got, text := pageValues(t, b, id)
	var flat []float64
	for _, w := range want {
		switch w := w.(type) {
		case nil:
			if !strings.HasPrefix(text, "none") {
				t.Errorf("#%s: page %q, want none (JSON null)", id, text)
			}
			return
		case float64:
			flat = append(flat, w)
		case []any:
			for _, x := range w {
				flat = append(flat, x.(float64))
			}
		default:
			t.Fatalf("#%s: unexpected JSON %T", id, w)
		}
	}
	if len(got) < len(flat) {
		t.Fatalf("#%s: page %q has the numbers %v, want %v", id, text, got, flat)
	}
	for i, w := range flat {
		if got[i] != w {
			t.Errorf("#%s: page %q: number %d is %v, want %v (query --format json)", id, text, i, got[i], w)
		}
	}
}

// closePValues fails unless the page's noise-aware p-value and its
// Monte-Carlo s.e. agree with the CLI's p and se: each is a bootstrap of
// its own (analyst.Analyst.HosmerRelease seeds it at random), so they
// may differ by their sampling error, √(se₁² + se₂²) in s.d.; 4.5 s.d.
// is exceeded by chance with probability below 10⁻⁵.
func closePValues(t *testing.T, b *browser, p, se float64) {
	t.Helper()
	got, text := pageValues(t, b, "p-private")
	if len(got) < 2 {
		t.Fatalf("noise-aware p-value %q: want p and its s.e.", text)
	}
	if sd := math.Sqrt(got[1]*got[1] + se*se); math.Abs(got[0]-p) > 4.5*sd {
		t.Errorf("noise-aware p-value %v ± %v on the page, %v ± %v by query: more than 4.5 s.d. apart", got[0], got[1], p, se)
	}
}

// queryJSON runs fedecdf query … --format json and decodes it.
func queryJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, err := runQuery(append([]string{"--format", "json"}, args...)...)
	if err != nil {
		t.Fatalf("query %s: %v", strings.Join(args, " "), err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// budgetLeft reads the budget left on the dataset page.
func budgetLeft(t *testing.T, b *browser, url string) float64 {
	t.Helper()
	b.open(t, url+"/")
	return epsilonIn(t, b.text(t, "budget-left"))
}

// tabTo presses Tab until the element of id has the focus, as a
// keyboard user would, and fails if it is not reached within 40 presses.
func tabTo(t *testing.T, b *browser, id string) {
	t.Helper()
	for range 40 {
		b.do(t, "Tab", chromedp.KeyEvent("\t"))
		if eval[string](t, b, "document.activeElement.id") == id {
			return
		}
	}
	t.Fatalf("#%s is not reachable with the Tab key", id)
}

// fedecdf ui in a real browser against a loopback deployment (leader and
// helper on 127.0.0.1, 200 parties uploaded), ε = 1 a release and a
// budget of 2: the pages' numbers are query --format json's; a ROC
// release created through the form (by mouse) and an ECDF release (by
// keyboard) each lower the budget by exactly the cost the confirmation
// showed; the third is refused as the CLI refuses it; a cross-origin
// POST is refused without spending; a file opened through the page
// shows its own numbers; no page references anything outside its
// origin; a screenshot of each page is kept.
func TestUIBrowser(t *testing.T) {
	b := newBrowser(t, 5*time.Minute)
	shots := screenshotDir(t)
	const epsilon = 1.0
	manifest, key := inProcessDeployment(t, epsilon, 200)
	sim, err := runCommand(newSimulateCommand(), "--parties", "400", "--backend", "plain", "--bins", "32", "--bootstrap", "50", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	simFile := filepath.Join(t.TempDir(), "sim.json")
	if err := os.WriteFile(simFile, []byte(sim), 0o644); err != nil {
		t.Fatal(err)
	}
	url := startUI(t, "--manifest", manifest, "--key", key, "--listen", "127.0.0.1:0", "--bootstrap", "200")
	analyst := []string{"--manifest", manifest, "--key", key}

	// Dataset: the policy, and the budget and counts of fedecdf status.
	if code := b.open(t, url+"/"); code != http.StatusOK {
		t.Fatalf("dataset page: HTTP %d", code)
	}
	if got := budgetLeft(t, b, url); got != 2*epsilon {
		t.Errorf("budget left %v, want %v", got, 2*epsilon)
	}
	if got := b.text(t, "reports-both"); got != "200" {
		t.Errorf("reports held by both: %s, want 200", got)
	}
	noExternal(t, b, "dataset")
	b.screenshot(t, shots, "dataset")

	// A ROC release through the form, by mouse.
	b.open(t, url+"/releases")
	b.text(t, "releases-none")
	noExternal(t, b, "releases")
	b.do(t, "choose roc", chromedp.Click(chromedp.ID("kind-roc")))
	b.submit(t, "review")
	cost := epsilonIn(t, b.text(t, "cost"))
	if cost != epsilon {
		t.Errorf("the confirmation shows a cost of ε = %v, want %v", cost, epsilon)
	}
	if after := epsilonIn(t, b.text(t, "left-after")); after != 2*epsilon-cost {
		t.Errorf("the confirmation shows ε = %v left after, want %v", after, 2*epsilon-cost)
	}
	noExternal(t, b, "confirm")
	b.screenshot(t, shots, "confirm")
	if code := b.submit(t, "create"); code != http.StatusOK {
		t.Fatalf("creating a ROC release: HTTP %d: %s", code, b.text(t, "main"))
	}
	rocID := b.text(t, "release")
	roc := queryJSON(t, append(analyst, "--release", rocID, "roc")...)
	sameNumbers(t, b, "auc", roc["auc"])
	sameNumbers(t, b, "auc-ci", roc["auc_ci95"])
	sameNumbers(t, b, "auc-ci-pop", roc["auc_ci95_population"])
	sameNumbers(t, b, "ap", roc["average_precision"])
	hl := queryJSON(t, append(analyst, "--release", rocID, "--bootstrap", "200", "hosmer")...)
	sameNumbers(t, b, "p-naive", hl["p_value_naive"])
	if hl["statistic"] != nil {
		sameNumbers(t, b, "hl-h", hl["statistic"])
		closePValues(t, b, hl["p_value_private"].(float64), hl["p_value_private_se"].(float64))
	}
	noExternal(t, b, "results of a ROC release")
	b.screenshot(t, shots, "results-roc")
	if got := budgetLeft(t, b, url); got != 2*epsilon-cost {
		t.Errorf("after the ROC release the budget left is ε = %v, want %v", got, 2*epsilon-cost)
	}

	t.Run("cross-origin POST", func(t *testing.T) { crossOriginPost(t, b, url, 2*epsilon-cost) })

	// An ECDF release by keyboard alone: Tab to the form, Enter.
	b.open(t, url+"/releases")
	b.do(t, "Tab", chromedp.KeyEvent("\t"))
	if got := eval[string](t, b, "document.activeElement.className"); got != "skip" {
		t.Errorf("the first Tab focuses %q, want the skip link", got)
	}
	tabTo(t, b, "kind-ecdf")
	tabTo(t, b, "review")
	if _, err := chromedp.RunResponse(b.ctx, chromedp.KeyEvent("\r")); err != nil {
		t.Fatal(err)
	}
	tabTo(t, b, "create")
	if _, err := chromedp.RunResponse(b.ctx, chromedp.KeyEvent("\r")); err != nil {
		t.Fatal(err)
	}
	ecdfID := b.text(t, "release")
	ecdf := queryJSON(t, append(analyst, "--release", ecdfID, "ecdf")...)
	qs := eval[[]float64](t, b, `Array.from(document.querySelectorAll('#quantiles td.q data')).map(e => Number(e.value))`)
	want := ecdf["quantiles"].(map[string]any)
	if len(qs) != len(want) {
		t.Fatalf("%d quantiles on the page, query has %d", len(qs), len(want))
	}
	for i, p := range sortedKeys(toFloats(want)) {
		if qs[i] != want[p] {
			t.Errorf("quantile %s: %v on the page, %v by query", p, qs[i], want[p])
		}
	}
	noExternal(t, b, "results of an ECDF release")
	b.screenshot(t, shots, "results-ecdf")
	if got := budgetLeft(t, b, url); got != 2*epsilon-2*cost {
		t.Errorf("after the ECDF release the budget left is ε = %v, want %v", got, 2*epsilon-2*cost)
	}
	b.open(t, url+"/releases")
	if n := eval[int](t, b, `document.querySelectorAll('#releases tbody tr').length`); n != 2 {
		t.Errorf("%d releases listed, want 2", n)
	}
	b.screenshot(t, shots, "releases")

	// The budget is spent: the page says the servers will refuse, and
	// they do, in the CLI's words.
	b.do(t, "choose ecdf", chromedp.Click(chromedp.ID("kind-ecdf")))
	b.submit(t, "review")
	b.text(t, "exceeds")
	if code := b.submit(t, "create"); code != http.StatusBadGateway {
		t.Errorf("a release beyond the budget: HTTP %d, want %d", code, http.StatusBadGateway)
	}
	// The same words but for the new release's random ID.
	anyID := regexp.MustCompile(`release [0-9a-f]{32}`)
	refusal := anyID.ReplaceAllString(b.text(t, "error"), "release ID")
	_, cliErr := runQuery(append(analyst, "ecdf")...)
	if cliErr == nil || refusal != "fedecdf: "+anyID.ReplaceAllString(cliErr.Error(), "release ID") {
		t.Errorf("the page shows %q, the CLI %v", refusal, cliErr)
	}
	b.screenshot(t, shots, "refused")
	if got := budgetLeft(t, b, url); got != 2*epsilon-2*cost {
		t.Errorf("after the refusal the budget left is ε = %v, want %v", got, 2*epsilon-2*cost)
	}

	// A simulate --format json file, through the page's form.
	b.open(t, url+"/open")
	noExternal(t, b, "open")
	b.do(t, "choose the file", chromedp.SetUploadFiles(chromedp.ID("file"), []string{simFile}))
	b.submit(t, "open")
	var report map[string]any
	json.Unmarshal([]byte(sim), &report)
	simROC := report["roc"].(map[string]any)
	sameNumbers(t, b, "auc", simROC["auc"])
	sameNumbers(t, b, "auc-ci", simROC["auc_ci95"])
	noExternal(t, b, "results of a file")
	b.screenshot(t, shots, "results-file")
}

// toFloats is m with its values as float64.
func toFloats(m map[string]any) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		out[k], _ = v.(float64)
	}
	return out
}

// crossOriginPost plays a page of another origin (another port of
// 127.0.0.1: same site, so the session cookie goes with it) that posts
// the release form, with the session's real CSRF token, as soon as the
// analyst opens it: the ui refuses it for its Origin, and the budget
// left stays left.
func crossOriginPost(t *testing.T, b *browser, url string, left float64) {
	b.open(t, url+"/releases")
	b.submit(t, "review")
	token := eval[string](t, b, `document.querySelector('input[name=csrf]').value`)
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!DOCTYPE html><form id="f" method="post" action="%s/releases/create">
<input type="hidden" name="csrf" value="%s"><input type="hidden" name="kind" value="ecdf">
<input type="hidden" name="confirm" value="yes"></form>
<script>document.getElementById("f").submit()</script>`, url, token)
	}))
	defer attacker.Close()
	b.open(t, attacker.URL)
	var body string
	for range 600 { // up to 30 s: a guard against a hung browser

		loc, err := chromedp.Run(b.ctx, chromedp.Location())
		if err == nil && strings.HasPrefix(loc, url) {
			body, err = chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS("body")))
			if err == nil && body != "" {
				break
			}
		}
		b.do(t, "wait", chromedp.Sleep(50*time.Millisecond))
	}
	if !strings.Contains(body, "cross-origin POST") {
		t.Errorf("the cross-origin POST was answered %q, want a refusal for its Origin", body)
	}
	if got := budgetLeft(t, b, url); got != left {
		t.Errorf("after the cross-origin POST the budget left is ε = %v, want %v", got, left)
	}
}

// fedecdf ui refuses a non-loopback address without --listen-public,
// and warns with it.
func TestUIListen(t *testing.T) {
	for _, tc := range []struct {
		listen string
		public bool
		want   error
	}{
		{"127.0.0.1:0", false, nil},
		{"[::1]:0", false, nil},
		{"localhost:0", false, nil},
		{"0.0.0.0:8080", false, errPublicListen},
		{"192.0.2.1:8080", false, errPublicListen},
		{"192.0.2.1:8080", true, nil},
	} {
		t.Run(tc.listen, func(t *testing.T) {
			o := uiFlags{listen: tc.listen, public: tc.public}
			cmd := newUICommand()
			var stderr strings.Builder
			cmd.SetErr(&stderr)
			if err := o.checkListen(cmd); !errors.Is(err, tc.want) {
				t.Errorf("checkListen = %v, want %v", err, tc.want)
			}
			if warned := strings.Contains(stderr.String(), "WARNING"); warned != (tc.public && tc.want == nil) {
				t.Errorf("warning %q", stderr.String())
			}
		})
	}
	if _, err := runCommand(newUICommand(), "--listen", "0.0.0.0:0", "--file", "x.json"); !errors.Is(err, errPublicListen) {
		t.Errorf("fedecdf ui --listen 0.0.0.0:0: %v, want the refusal", err)
	}
}

// uiClient is an HTTP client of a fedecdf ui with its session.
type uiClient struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newUIClient(t *testing.T, base string) *uiClient {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &uiClient{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends a GET (form nil) or a POST of form from the ui's own origin,
// and returns the status, Location and body.
func (u *uiClient) do(path string, form url.Values) (int, string, string) {
	u.t.Helper()
	var req *http.Request
	if form == nil {
		req, _ = http.NewRequest(http.MethodGet, u.base+path, nil)
	} else {
		req, _ = http.NewRequest(http.MethodPost, u.base+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", u.base)
	}
	resp, err := u.c.Do(req)
	if err != nil {
		u.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(body)
}

// fedecdf ui over HTTP, no browser needed: a release created through
// the confirmation form is charged exactly its shown cost at both
// servers and reads as query --release reads it; a create without the
// confirmation, an unknown kind and an unknown release are refused
// without spending; no page or download holds the analyst's private key.
func TestUIHTTP(t *testing.T) {
	manifest, key := inProcessDeployment(t, 0.5, 100)
	base := startUI(t, "--manifest", manifest, "--key", key, "--listen", "127.0.0.1:0", "--interval-draws", "50", "--bootstrap", "20")
	u := newUIClient(t, base)
	var bodies []string
	get := func(path string, want int) string {
		t.Helper()
		code, _, body := u.do(path, nil)
		if code != want {
			t.Fatalf("GET %s: HTTP %d, want %d: %s", path, code, want, body)
		}
		bodies = append(bodies, body)
		return body
	}
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(get("/releases", http.StatusOK))
	if m == nil {
		t.Fatal("no CSRF token in the releases page")
	}
	token := m[1]
	post := func(path string, want int, kv ...string) (string, string) {
		t.Helper()
		form := url.Values{"csrf": {token}}
		for i := 0; i+1 < len(kv); i += 2 {
			form.Set(kv[i], kv[i+1])
		}
		code, loc, body := u.do(path, form)
		if code != want {
			t.Fatalf("POST %s %v: HTTP %d, want %d: %s", path, kv, code, want, body)
		}
		bodies = append(bodies, body)
		return loc, body
	}
	spent := func() []float64 {
		out, err := runStatus("--manifest", manifest, "--key", key, "--format", "json")
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Servers []struct{ Spent struct{ Epsilon float64 } }
		}
		json.Unmarshal([]byte(out), &st)
		var e []float64
		for _, s := range st.Servers {
			e = append(e, s.Spent.Epsilon)
		}
		return e
	}

	_, confirm := post("/releases/confirm", http.StatusOK, "kind", "roc")
	if !strings.Contains(confirm, `id="cost">ε = 0.5, δ = 0<`) {
		t.Errorf("the confirmation does not show the cost ε = 0.5, δ = 0:\n%s", confirm)
	}
	post("/releases/create", http.StatusBadRequest, "kind", "roc")
	post("/releases/confirm", http.StatusBadRequest, "kind", "histogram")
	post("/releases/create", http.StatusBadRequest, "kind", "histogram", "confirm", "yes")
	if got := spent(); len(got) != 2 || got[0] != 0 || got[1] != 0 {
		t.Fatalf("refused requests spent ε %v", got)
	}
	loc, _ := post("/releases/create", http.StatusSeeOther, "kind", "roc", "confirm", "yes")
	id := strings.TrimPrefix(loc, "/results/")
	if got := spent(); len(got) != 2 || got[0] != 0.5 || got[1] != 0.5 {
		t.Errorf("after one release the servers spent ε %v, want 0.5 at both", got)
	}
	get(loc, http.StatusOK)
	var page, cli map[string]any
	json.Unmarshal([]byte(get(loc+"/roc.json", http.StatusOK)), &page)
	out, err := runQuery("--manifest", manifest, "--key", key, "--format", "json", "--interval-draws", "50", "--release", id, "roc")
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(out), &cli)
	if page["charged"] != true || cli["charged"] != false {
		t.Errorf("charged: page %v (created it), query %v (re-read)", page["charged"], cli["charged"])
	}
	delete(page, "charged")
	delete(cli, "charged")
	if a, b := fmt.Sprint(page), fmt.Sprint(cli); a != b {
		t.Errorf("the page's roc.json differs from query --release %s roc", id)
	}
	for _, f := range []string{"roc.svg", "roc.png", "roc.csv", "pr.csv", "calibration.json", "calibration.csv"} {
		get(loc+"/"+f, http.StatusOK)
	}
	get("/results/"+strings.Repeat("ab", 16), http.StatusBadRequest)
	get("/results/nothex", http.StatusBadRequest)
	get("/", http.StatusOK)
	// A release created elsewhere (query) is listed with the leader's
	// time of it too.
	out, err = runQuery("--manifest", manifest, "--key", key, "--format", "json", "--interval-draws", "50", "ecdf")
	if err != nil {
		t.Fatal(err)
	}
	var elsewhere struct{ Release string }
	json.Unmarshal([]byte(out), &elsewhere)
	list := get("/releases", http.StatusOK)
	for _, rel := range []string{id, elsewhere.Release} {
		if !regexp.MustCompile(rel + `</a></td>.*<td>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ</td>`).MatchString(list) {
			t.Errorf("the releases page does not list %s with its creation time:\n%s", rel, list)
		}
	}
	get("/open", http.StatusOK)

	// The key file's private fields appear in no answer.
	raw, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	json.Unmarshal(raw, &fields)
	checked := 0
	for name, v := range fields {
		secret, ok := v.(string)
		if !ok || name == "public" || len(secret) < 16 {
			continue
		}
		checked++
		for _, body := range bodies {
			if strings.Contains(body, secret) {
				t.Errorf("a page holds the key file's %s", name)
			}
		}
	}
	if checked < 2 {
		t.Errorf("only %d private fields in the key file %s: %s", checked, key, raw)
	}
}
