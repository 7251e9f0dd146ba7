package console

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// queueOnly is an Actions with one pending review that records the
// decisions asked of it: the security tests are about which requests reach
// Actions at all.
type queueOnly struct{ decided []string }

func (q *queueOnly) Queue(context.Context) ([]Summary, error) {
	return []Summary{{ID: "rv-1", Server: "peer", State: "pending", ExpiresAt: time.Now().Add(time.Minute)}}, nil
}
func (q *queueOnly) Review(_ context.Context, id string) (Review, error) {
	if id != "rv-1" {
		return Review{}, errors.New("no review")
	}
	return Review{Summary: Summary{ID: id, State: "pending"}, Approvable: true, Doc: "systemPrompt: hi\n"}, nil
}
func (q *queueOnly) Approve(_ context.Context, id, _, _ string) error {
	q.decided = append(q.decided, "approve "+id)
	return nil
}
func (q *queueOnly) Reject(_ context.Context, id, _ string) error {
	q.decided = append(q.decided, "reject "+id)
	return nil
}
func (q *queueOnly) Answer(context.Context, string, string, string) error { return nil }
func (q *queueOnly) Cost(context.Context, string) (Cost, error)           { return Cost{}, nil }
func (q *queueOnly) Audit(context.Context) (Audit, error)                 { return Audit{}, nil }
func (q *queueOnly) Changed() <-chan struct{}                             { return nil }

// testConsole serves a console over a fresh queueOnly on a loopback test
// server, with the Host it answers to set to that server's address.
func testConsole(t *testing.T) (*httptest.Server, *Server, *queueOnly) {
	q := &queueOnly{}
	ts := httptest.NewUnstartedServer(nil)
	s := New(q, ts.Listener.Addr().String())
	ts.Config.Handler = s.Handler()
	ts.Start()
	t.Cleanup(ts.Close)
	return ts, s, q
}

// signIn redeems the login link in a client with a cookie jar and returns
// it with the session's CSRF token, read from the review page.
func signIn(t *testing.T, ts *httptest.Server, s *Server) (*http.Client, string) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	res, err := c.Get(ts.URL + s.LoginPath())
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("sign in: %v %v", err, res)
	}
	body := get(t, c, ts.URL+"/review/rv-1", http.StatusOK)
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no CSRF token in the review page")
	}
	return c, m[1]
}

func get(t *testing.T, c *http.Client, u string, want int) string {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("GET %s: %d, want %d: %s", u, res.StatusCode, want, b)
	}
	return string(b)
}

func TestSignInLinkWorksOnce(t *testing.T) {
	ts, s, _ := testConsole(t)
	link := ts.URL + s.LoginPath()
	c, _ := signIn(t, ts, s)
	get(t, http.DefaultClient, link, http.StatusForbidden)
	get(t, c, ts.URL+"/", http.StatusOK)
}

func TestSessionCookieIsHttpOnlyAndStrict(t *testing.T) {
	ts, s, _ := testConsole(t)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(ts.URL + s.LoginPath())
	if err != nil {
		t.Fatal(err)
	}
	cookie := res.Header.Get("Set-Cookie")
	for _, want := range []string{cookieName + "=", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("cookie %q lacks %s", cookie, want)
		}
	}
	if strings.Contains(cookie, s.LoginPath()[len("/login?token="):]) {
		t.Error("the cookie holds the sign-in token")
	}
}

func TestRefusals(t *testing.T) {
	ts, s, q := testConsole(t)
	c, csrf := signIn(t, ts, s)
	form := func(token string) url.Values { return url.Values{"csrf": {token}, "reason": {"no"}} }
	cases := []struct {
		name   string
		client *http.Client
		host   string
		origin string
		site   string // Sec-Fetch-Site
		form   url.Values
		want   int
	}{
		{name: "no cookie", client: http.DefaultClient, form: form(csrf), want: http.StatusUnauthorized},
		{name: "missing CSRF", client: c, form: url.Values{"reason": {"no"}}, want: http.StatusForbidden},
		{name: "wrong CSRF", client: c, form: form(strings.Repeat("0", len(csrf))), want: http.StatusForbidden},
		{name: "foreign Origin", client: c, origin: "http://evil.example", form: form(csrf), want: http.StatusForbidden},
		{name: "null Origin", client: c, origin: "null", form: form(csrf), want: http.StatusForbidden},
		{name: "null Origin from another site", client: c, origin: "null", site: "cross-site", form: form(csrf), want: http.StatusForbidden},
		{name: "rebound Host", client: c, host: "evil.example:" + ts.URL[strings.LastIndex(ts.URL, ":")+1:], form: form(csrf), want: http.StatusMisdirectedRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/review/rv-1/reject", strings.NewReader(tc.form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.site != "" {
				req.Header.Set("Sec-Fetch-Site", tc.site)
			}
			res, err := tc.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.want {
				t.Errorf("status %d, want %d", res.StatusCode, tc.want)
			}
		})
	}
	if len(q.decided) != 0 {
		t.Fatalf("refused requests reached the queue: %v", q.decided)
	}
	res, err := c.PostForm(ts.URL+"/review/rv-1/reject", form(csrf))
	if err != nil || res.StatusCode != http.StatusOK || len(q.decided) != 1 {
		t.Fatalf("the signed-in form with its token: %v %v %v", err, res, q.decided)
	}
}

func TestPagesNeedASession(t *testing.T) {
	ts, _, _ := testConsole(t)
	for _, p := range []string{"/", "/queue", "/events", "/review/rv-1", "/audit"} {
		get(t, http.DefaultClient, ts.URL+p, http.StatusUnauthorized)
	}
}

func TestSecurityHeaders(t *testing.T) {
	ts, s, _ := testConsole(t)
	c, _ := signIn(t, ts, s)
	for _, p := range []string{"/", "/review/rv-1", "/assets/console.js", "/login?token=x"} {
		res, err := c.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		for k, want := range map[string]string{"Content-Security-Policy": csp, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
			if got := res.Header.Get(k); got != want {
				t.Errorf("%s: %s = %q, want %q", p, k, got, want)
			}
		}
	}
}

// TestEventsAnnounceOnSubscribe: the stream's first event is "changed",
// before anything changes, so a review that arrived between the page's
// render and its subscription still reaches the page.
func TestEventsAnnounceOnSubscribe(t *testing.T) {
	ts, s, _ := testConsole(t)
	c, _ := signIn(t, ts, s)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/events", nil)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	buf := make([]byte, 0, 256)
	for !strings.Contains(string(buf), "event: changed") {
		chunk := make([]byte, 256)
		n, err := res.Body.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if err != nil {
			t.Fatalf("the stream said %q and then %v, want a changed event at once", buf, err)
		}
	}
}
