package ui

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/roc"
)

// pageNames are the templates under assets, each filling the layout.
var pageNames = []string{"dataset", "releases", "confirm", "results", "open", "error"}

// parsePages parses each page with the layout.
func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{"num": f, "val": val}
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("ui: page %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// val shows x to 4 significant digits in a data element whose value is
// x exactly, for whoever reads the page's numbers by machine.
func val(x float64) template.HTML {
	return template.HTML(fmt.Sprintf(`<data value="%s">%s</data>`, f(x), strconv.FormatFloat(x, 'g', 4, 64)))
}

// routes sets up the mux.
func (s *Server) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	m.Handle("GET /static/style.css", http.StripPrefix("/static/", http.FileServerFS(static)))
	m.HandleFunc("GET /{$}", s.dataset)
	m.HandleFunc("GET /releases", s.releases)
	m.HandleFunc("POST /releases/confirm", s.confirm)
	m.HandleFunc("POST /releases/create", s.create)
	m.HandleFunc("GET /results/{key}", s.resultsPage)
	m.HandleFunc("GET /results/{key}/{file}", s.download)
	m.HandleFunc("GET /open", s.openPage)
	m.HandleFunc("POST /open", s.open)
	s.mux = m
}

// page is what every page's template gets.
type page struct {
	Title, Active, CSRF string
	Deployment          bool
	Data                any
}

// render renders page name with data, status code.
func (s *Server) render(w http.ResponseWriter, r *http.Request, code int, name, title string, data any) {
	session, _ := r.Context().Value(sessionKey{}).(string)
	p := page{Title: title, Active: name, CSRF: s.token(session), Deployment: s.cfg.Deployment != nil, Data: data}
	var b strings.Builder
	if err := s.pages[name].Execute(&b, p); err != nil {
		s.cfg.Logger.Error("ui: template", "page", name, "err", err)
		http.Error(w, "ui: page "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	io.WriteString(w, b.String())
}

// fail renders err as the CLI prints it ("fedecdf: " and the error).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, code int, err error) {
	s.render(w, r, code, "error", "Error", "fedecdf: "+err.Error())
}

// errorStatus is the HTTP status of an error of a Deployment: 400 for
// a request this server refuses, 502 for what the servers answered.
func errorStatus(err error) int {
	if errors.Is(err, ErrKind) || errors.Is(err, ErrNotViewable) || errors.Is(err, ErrNoRelease) {
		return http.StatusBadRequest
	}
	return http.StatusBadGateway
}

// ctx bounds a request's calls to the servers.
func (s *Server) ctx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.cfg.Timeout)
}

// needDeployment redirects to the file page when no deployment is
// served, and says so.
func (s *Server) needDeployment(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.Deployment == nil {
		http.Redirect(w, r, "/open", http.StatusSeeOther)
		return false
	}
	return true
}

// datasetView is the dataset page's data.
type datasetView struct {
	M      *manifest.Manifest
	Status *analyst.Status
	Err    string
	Left   budgetLeft
}

// budgetLeft is what the budget still allows at both servers: the
// smaller of the two ledgers' totals less their spending.
type budgetLeft struct {
	Epsilon, Delta float64
	Known          bool
}

// left returns the budget left at both servers of st.
func left(st *analyst.Status) budgetLeft {
	b := budgetLeft{Epsilon: math.Inf(1), Delta: math.Inf(1)}
	for _, sv := range st.Servers {
		if !sv.Reachable {
			return budgetLeft{}
		}
		b.Epsilon = min(b.Epsilon, sv.Total.Epsilon-sv.Spent.Epsilon)
		b.Delta = min(b.Delta, sv.Total.Delta-sv.Spent.Delta)
	}
	b.Known = len(st.Servers) > 0
	return b
}

// status asks the leader for the deployment's status.
func (s *Server) status(r *http.Request) (*analyst.Status, error) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	return s.cfg.Deployment.Status(ctx)
}

func (s *Server) dataset(w http.ResponseWriter, r *http.Request) {
	if !s.needDeployment(w, r) {
		return
	}
	v := datasetView{M: s.cfg.Deployment.Manifest()}
	st, err := s.status(r)
	if err != nil {
		v.Err = "fedecdf: " + err.Error()
	} else {
		v.Status, v.Left = st, left(st)
	}
	s.render(w, r, http.StatusOK, "dataset", "Dataset "+v.M.Dataset, v)
}

// releaseRow is one release of the releases page; its Created is when
// the leader created it (deploy.ReleaseState), or, for a release the
// leader recorded before it kept the time, when this ui created it ("":
// unknown).
type releaseRow struct {
	analyst.ReleaseState
	// AtHelper: the helper recorded the release too.
	AtHelper  bool
	Guarantee string
}

// releasesView is the releases page's data.
type releasesView struct {
	Releases []releaseRow
	Kinds    []Cost
	Left     budgetLeft
	Err      string
}

func (s *Server) releases(w http.ResponseWriter, r *http.Request) {
	if !s.needDeployment(w, r) {
		return
	}
	var v releasesView
	for _, k := range Kinds {
		if c, err := s.cfg.Deployment.Cost(k); err == nil {
			v.Kinds = append(v.Kinds, c)
		}
	}
	st, err := s.status(r)
	if err != nil {
		v.Err = "fedecdf: " + err.Error()
		s.render(w, r, http.StatusOK, "releases", "Releases", v)
		return
	}
	v.Left = left(st)
	helper := map[string]bool{}
	if len(st.Servers) > 1 {
		for _, rel := range st.Servers[1].Releases {
			helper[rel.Release] = true
		}
	}
	s.mu.Lock()
	for _, rel := range st.Servers[0].Releases {
		row := releaseRow{ReleaseState: rel, AtHelper: helper[rel.Release]}
		if res := s.results[rel.Release]; res != nil {
			row.Guarantee = res.guarantee()
			if row.Created == "" {
				row.Created = res.Created
			}
		}
		v.Releases = append(v.Releases, row)
	}
	s.mu.Unlock()
	s.render(w, r, http.StatusOK, "releases", "Releases", v)
}

// guarantee is the guarantee sentence of the results' release.
func (res *Results) guarantee() string {
	switch {
	case res.ECDF != nil:
		return res.ECDF.Guarantee
	case res.ROC != nil:
		return res.ROC.Guarantee
	case res.Hosmer != nil:
		return res.Hosmer.Guarantee
	}
	return ""
}

// confirmView is the confirmation page's data.
type confirmView struct {
	Cost        Cost
	Left, After budgetLeft
	// Exceeds: the servers will refuse the release.
	Exceeds bool
}

func (s *Server) confirm(w http.ResponseWriter, r *http.Request) {
	if !s.needDeployment(w, r) {
		return
	}
	c, err := s.cfg.Deployment.Cost(r.PostFormValue("kind"))
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return
	}
	st, err := s.status(r)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, err)
		return
	}
	v := confirmView{Cost: c, Left: left(st)}
	v.After = budgetLeft{Epsilon: v.Left.Epsilon - c.Epsilon, Delta: v.Left.Delta - c.Delta, Known: v.Left.Known}
	v.Exceeds = v.Left.Known && (v.After.Epsilon < -1e-12 || v.After.Delta < -1e-15)
	s.render(w, r, http.StatusOK, "confirm", "Confirm a new "+c.Kind+" release", v)
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	if !s.needDeployment(w, r) {
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		s.fail(w, r, http.StatusBadRequest, fmt.Errorf("ui: a release is created only from its confirmation page"))
		return
	}
	ctx, cancel := s.ctx(r)
	defer cancel()
	res, err := s.cfg.Deployment.Create(ctx, r.PostFormValue("kind"))
	if err != nil {
		s.fail(w, r, errorStatus(err), err)
		return
	}
	res.Created = time.Now().UTC().Format(time.RFC3339)
	s.mu.Lock()
	s.results[res.Release] = res
	s.mu.Unlock()
	http.Redirect(w, r, "/results/"+res.Release, http.StatusSeeOther)
}

// lookup returns the results of key: a file opened, a release read
// before, or a release read now (at no cost).
func (s *Server) lookup(r *http.Request, key string) (*Results, int, error) {
	s.mu.Lock()
	res := s.results[key]
	s.mu.Unlock()
	if res != nil {
		return res, 0, nil
	}
	if s.cfg.Deployment == nil || strings.HasPrefix(key, "file-") {
		return nil, http.StatusNotFound, fmt.Errorf("ui: no results %q", key)
	}
	st, err := s.status(r)
	if err != nil {
		return nil, http.StatusBadGateway, err
	}
	ctx, cancel := s.ctx(r)
	defer cancel()
	if res, err = s.cfg.Deployment.Read(ctx, st, key); err != nil {
		return nil, errorStatus(err), err
	}
	s.mu.Lock()
	s.results[key] = res
	s.mu.Unlock()
	return res, 0, nil
}

// resultsView is the results page's data.
type resultsView struct {
	Key string
	*Results
	ECDFRows, PRRows [][]string
	ROCRows          []rocRow
	Quantiles        []quantileRow
	GroupRows        [][]string
}

// quantileRow is a quantile and its 95 % interval (nil: none).
type quantileRow struct {
	P  string
	Q  float64
	CI *[2]float64
}

// rocRow is the ROC's TPR at one FPR with its band.
type rocRow struct {
	FPR, TPR, Lo, Hi string
}

func (s *Server) resultsPage(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	res, code, err := s.lookup(r, key)
	if err != nil {
		s.fail(w, r, code, err)
		return
	}
	v := resultsView{Key: key, Results: res}
	if e := res.ECDF; e != nil {
		v.ECDFRows = ecdfRows(e, max(1, len(e.Thresholds)/20), short)
		for _, p := range sortedKeys(e.Quantiles) {
			q := quantileRow{P: p, Q: e.Quantiles[p]}
			if ci, ok := e.QuantilesCI95[p]; ok {
				q.CI = &ci
			}
			v.Quantiles = append(v.Quantiles, q)
		}
	}
	if ro := res.ROC; ro != nil {
		// roc.Curve.TPRAt, as analysis.Curve.TPRAt, for a curve read
		// from a file too
		for _, x := range analysis.BandFPRs {
			if fpr, lo, hi, ok := ro.Band95.At(x); ok {
				v.ROCRows = append(v.ROCRows, rocRow{FPR: short(fpr), TPR: short((&roc.Curve{FPR: ro.FPR, TPR: ro.TPR}).TPRAt(fpr)), Lo: short(lo), Hi: short(hi)})
			}
		}
		step := max(1, len(ro.Recall)/20)
		v.PRRows = [][]string{{"recall", "precision"}}
		for i := 0; i < len(ro.Recall); i += step {
			v.PRRows = append(v.PRRows, []string{short(ro.Recall[i]), short(ro.Precision[i])})
		}
	}
	if h := res.Hosmer; h != nil {
		v.GroupRows = groupRows(h, short)
	}
	title := "Results of release " + res.Release
	if res.Source != "" {
		title = "Results of " + res.Source
	}
	s.render(w, r, http.StatusOK, "results", title, v)
}

// download serves figure.svg, .png, .json or .csv of a results key.
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	res, code, err := s.lookup(r, r.PathValue("key"))
	if err != nil {
		s.fail(w, r, code, err)
		return
	}
	name, ext, _ := strings.Cut(r.PathValue("file"), ".")
	if !res.has(name) {
		s.fail(w, r, http.StatusNotFound, fmt.Errorf("ui: no %s in these results", r.PathValue("file")))
		return
	}
	var b strings.Builder
	switch ext {
	case "svg", "png":
		var c interface{ Encode(io.Writer, string) error }
		if c, err = res.Chart(name); err == nil {
			err = c.Encode(&b, ext)
		}
		w.Header().Set("Content-Type", map[string]string{"svg": "image/svg+xml", "png": "image/png"}[ext])
		if ext == "svg" {
			w.Header().Set("Content-Security-Policy", svgCSP)
		}
	case "json":
		err = res.JSON(&b, name)
		w.Header().Set("Content-Type", "application/json")
	case "csv":
		err = res.CSV(&b, name)
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	default:
		err = fmt.Errorf("ui: %s: want .svg, .png, .json or .csv", r.PathValue("file"))
	}
	if err != nil {
		w.Header().Del("Content-Type")
		s.fail(w, r, http.StatusNotFound, err)
		return
	}
	if r.URL.Query().Get("download") != "" {
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", r.PathValue("file")))
	}
	io.WriteString(w, b.String())
}

// openView is the file page's data.
type openView struct {
	Files []openedFile
}

type openedFile struct{ Key, Source string }

func (s *Server) openPage(w http.ResponseWriter, r *http.Request) {
	var v openView
	s.mu.Lock()
	for _, k := range s.files {
		v.Files = append(v.Files, openedFile{Key: k, Source: s.results[k].Source})
	}
	s.mu.Unlock()
	s.render(w, r, http.StatusOK, "open", "Open a result file", v)
}

func (s *Server) open(w http.ResponseWriter, r *http.Request) {
	file, header, err := r.FormFile("file")
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, fmt.Errorf("ui: no file chosen: %w", err))
		return
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, maxUpload))
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return
	}
	path, err := s.AddFile(header.Filename, data)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}
