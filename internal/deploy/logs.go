package deploy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// LogFormats are the formats NewLogger writes.
var LogFormats = []string{"text", "json"}

// NewLogger returns a logger writing one line per event to w, as
// logfmt-like text (key=value) or JSON, at the named level (debug, info,
// warn or error) and above. Every string and error is flattened to one
// line (a newline becomes " | "), so that an operator can grep the log
// line by line. Its errors name the flag: --log-format, --log-level.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l, ReplaceAttr: oneLine}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want %s", format, strings.Join(LogFormats, " or "))
}

// oneLine is a slog.HandlerOptions.ReplaceAttr that flattens strings and
// errors (libp2p's dial errors span lines) to one line.
func oneLine(_ []string, a slog.Attr) slog.Attr {
	var s string
	switch v := a.Value.Any().(type) {
	case string:
		s = v
	case error:
		s = v.Error()
	default:
		return a
	}
	if strings.ContainsAny(s, "\r\n") {
		s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " | ")
	}
	return slog.String(a.Key, s)
}

// maxLastErrors is how many warnings and errors a server keeps for
// fedecdf status.
const maxLastErrors = 16

// lastErrors keeps the most recent line of each of the last
// maxLastErrors distinct causes (a line's msg) written to it, one line
// per Write (slog's text handler writes one record per call): a flood of
// one warning leaves the other causes in view.
type lastErrors struct {
	mu    sync.Mutex
	lines []string
}

func (e *lastErrors) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	cause := lineMsg(line)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lines = slices.DeleteFunc(e.lines, func(l string) bool { return lineMsg(l) == cause })
	if len(e.lines) == maxLastErrors {
		e.lines = append(e.lines[:0], e.lines[1:]...)
	}
	e.lines = append(e.lines, line)
	return len(p), nil
}

// lineMsg returns the msg of a text-handler line (the whole line if it
// has none).
func lineMsg(line string) string {
	_, rest, found := strings.Cut(line, " msg=")
	if !found {
		return line
	}
	if q, err := strconv.QuotedPrefix(rest); err == nil {
		return q
	}
	msg, _, _ := strings.Cut(rest, " ")
	return msg
}

// snapshot returns the kept lines, oldest first.
func (e *lastErrors) snapshot() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.lines...)
}

// recordingHandler passes every record to the operator's handler, as its
// level allows, and keeps every warning and error in last, whatever that
// level, as one text line.
type recordingHandler struct {
	slog.Handler
	last *slog.TextHandler
}

// withLastErrors returns a logger that also keeps its warnings and
// errors in last.
func withLastErrors(l *slog.Logger, last *lastErrors) *slog.Logger {
	text := slog.NewTextHandler(last, &slog.HandlerOptions{Level: slog.LevelWarn, ReplaceAttr: oneLine})
	return slog.New(&recordingHandler{Handler: l.Handler(), last: text})
}

func (h *recordingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.Handler.Enabled(ctx, l)
}

func (h *recordingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		_ = h.last.Handle(ctx, r)
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h *recordingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &recordingHandler{Handler: h.Handler.WithAttrs(attrs), last: h.last.WithAttrs(attrs).(*slog.TextHandler)}
}

func (h *recordingHandler) WithGroup(name string) slog.Handler {
	return &recordingHandler{Handler: h.Handler.WithGroup(name), last: h.last.WithGroup(name).(*slog.TextHandler)}
}
