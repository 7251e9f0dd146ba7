package policybundle

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// shownURL is raw as status, the service log and errors show it: a
// password in the user part and every query value replaced by xxxxx. The
// bundle's URL is the operator's config, and its resource may carry a
// token as a query parameter (OPA appends the resource to the URL as it
// is); /status may be read over the network.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"xxxxx"}
		}
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// scrubbed is err without the URL of a failed request (net/http's
// *url.Error quotes it whole): the request's error, with the URL shown as
// shownURL shows it, in place of whatever OPA wrapped around it (whose
// text, made when it was wrapped, quotes the URL too).
func scrubbed(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return fmt.Errorf("request failed: %w", &url.Error{Op: ue.Op, URL: shownURL(ue.URL), Err: ue.Err})
	}
	return err
}

// location is base and resource joined as OPA's rest client joins them.
func location(base, resource string) string {
	return strings.TrimRight(base, "/") + "/" + strings.Trim(resource, "/")
}
