package ui

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// ErrForbidden is the refusal of a request failing the Host, Origin or
// CSRF checks.
var ErrForbidden = errors.New("ui: refused")

//go:embed assets
var assets embed.FS

// csp is the Content-Security-Policy of every page: nothing but this
// server's style sheet and images, no script, no frames, forms posting
// only here.
const csp = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// svgCSP is the policy of an SVG opened on its own: its inline styles
// only.
const svgCSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"

// sessionCookie names the session cookie.
const sessionCookie = "fedecdf_ui_session"

// Config configures a Server.
type Config struct {
	// Deployment is the deployment the pages read and the release form
	// spends; nil serves files only.
	Deployment *Deployment
	// Addr is the listening address, host:port: the only Host the server
	// answers (with localhost for a loopback IP).
	Addr string
	// Logger logs refused requests and server errors (nil: none).
	Logger *slog.Logger
	// Timeout bounds each call to the servers.
	Timeout time.Duration
}

// Server serves the pages.
type Server struct {
	cfg   Config
	key   [32]byte // HMAC key of the CSRF tokens
	hosts map[string]bool
	pages map[string]*template.Template
	mux   *http.ServeMux

	mu      sync.Mutex
	results map[string]*Results // by release ID or "file-N"
	files   []string            // keys of the files, in order opened
}

// New returns a server of cfg.
func New(cfg Config) (*Server, error) {
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("ui: address %q: %w", cfg.Addr, err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Minute
	}
	s := &Server{cfg: cfg, hosts: map[string]bool{cfg.Addr: true}, results: map[string]*Results{}}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		s.hosts[net.JoinHostPort("localhost", port)] = true
	}
	if _, err := rand.Read(s.key[:]); err != nil {
		return nil, err
	}
	if s.pages, err = parsePages(); err != nil {
		return nil, err
	}
	s.routes()
	return s, nil
}

// AddFile opens the JSON file data, named source (ReadFile), and
// returns the path of its results page.
func (s *Server) AddFile(source string, data []byte) (string, error) {
	res, err := ReadFile(source, data)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := "file-" + strconv.Itoa(len(s.files)+1)
	s.files = append(s.files, key)
	s.results[key] = res
	return "/results/" + key, nil
}

// ServeHTTP checks the Host, sets the security headers and the session,
// checks Origin and CSRF token of a POST, and serves the page.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: with no-referrer the browser sends
	// "Origin: null" on the forms' own POSTs, which checkPost refuses.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if !s.hosts[r.Host] {
		s.refuse(w, r, fmt.Sprintf("Host %q is not this server's address %s", r.Host, s.cfg.Addr))
		return
	}
	session := s.session(w, r)
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
		if why := s.checkPost(r, session); why != "" {
			s.refuse(w, r, why)
			return
		}
	} else if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, session)))
}

// sessionKey keys the session ID in a request's context.
type sessionKey struct{}

// session returns the request's session ID, starting a session when the
// request has none.
func (s *Server) session(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(sessionCookie); err == nil && len(c.Value) == 64 {
		if _, err := hex.DecodeString(c.Value); err == nil {
			return c.Value
		}
	}
	var b [32]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return id
}

// token is the CSRF token of session: HMAC-SHA256(key, session).
func (s *Server) token(session string) string {
	m := hmac.New(sha256.New, s.key[:])
	m.Write([]byte(session))
	return hex.EncodeToString(m.Sum(nil))
}

// checkPost says why a POST of session is refused, or "": it must come
// from a page of this server (Origin) within a session that the form's
// token belongs to.
func (s *Server) checkPost(r *http.Request, session string) string {
	origin := r.Header.Get("Origin")
	if origin != "http://"+r.Host {
		return fmt.Sprintf("cross-origin POST: Origin %q is not http://%s", origin, r.Host)
	}
	if _, err := r.Cookie(sessionCookie); err != nil {
		return "POST without a session: open the page first"
	}
	if err := r.ParseMultipartForm(maxUpload); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		return "unreadable form: " + err.Error()
	}
	got := r.PostFormValue("csrf")
	if subtle.ConstantTimeCompare([]byte(got), []byte(s.token(session))) != 1 {
		return "the form's CSRF token does not belong to this session: reload the page"
	}
	return ""
}

// maxUpload bounds a POST's body, an opened file with it.
const maxUpload = 64 << 20

// refuse answers 403 and logs why.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, why string) {
	s.cfg.Logger.Warn("ui: request refused", "method", r.Method, "path", r.URL.Path, "why", why)
	http.Error(w, fmt.Sprintf("%v: %s", ErrForbidden, why), http.StatusForbidden)
}
