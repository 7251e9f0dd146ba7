package review

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestStatStartCountsFromTheLastParen: a command name may hold spaces and
// parentheses, so field 22 is counted from the last ')'.
func TestStatStartCountsFromTheLastParen(t *testing.T) {
	rest := "S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 424242 19 20"
	for _, comm := range []string{"(serve)", "(a b)", "(x) S 9 9 (y)", "())"} {
		got, err := statStart("1234 " + comm + " " + rest)
		if err != nil || got != "424242" {
			t.Errorf("statStart with comm %s = %q, %v; want 424242", comm, got, err)
		}
	}
	for _, bad := range []string{"", "1234 no paren", "1234 (x) S 1 2"} {
		if _, err := statStart(bad); err == nil {
			t.Errorf("statStart(%q) accepted a malformed line", bad)
		}
	}
}

func TestProcStartOfThisProcess(t *testing.T) {
	start, err := procStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := strconv.ParseUint(start, 10, 64); err != nil {
		t.Errorf("start time %q is not a tick count", start)
	}
	if !strings.HasPrefix(selfToken(), strconv.Itoa(os.Getpid())+":"+start+":") {
		t.Errorf("selfToken %q does not carry start time %s", selfToken(), start)
	}
}
