package zklock

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscapeResource(t *testing.T) {
	for in, want := range map[string]string{
		"accounts/42":  "accounts%2F42",
		"a.b_c-d":      "a.b_c-d",
		".":            "%2E",
		"..":           "%2E%2E",
		"...":          "...",
		"%2e":          "%252e",
		"naïve":        "na%C3%AFve",
		"a b":          "a%20b",
		"/":            "%2F",
		"zookeeper":    "zookeeper",
		"_c_x-lock-00": "_c_x-lock-00",
	} {
		if got := EscapeResource(in); got != want {
			t.Errorf("EscapeResource(%q) = %q, want %q", in, got, want)
		}
		if back, ok := UnescapeResource(want); !ok || back != in {
			t.Errorf("UnescapeResource(%q) = %q, %v", want, back, ok)
		}
	}
	for _, bad := range []string{"", ".", "..", "a/b", "%2f", "%2", "%G0", "%41", "a%2Eb"} {
		if r, ok := UnescapeResource(bad); ok {
			t.Errorf("UnescapeResource(%q) = %q, want rejection", bad, r)
		}
	}
}

// FuzzEscapeResource checks, for any input, that a valid resource maps to
// exactly one znode name that stays inside the root, and back.
func FuzzEscapeResource(f *testing.F) {
	for _, s := range []string{"accounts/42", "..", ".", "../../etc/passwd", "%2e%2e", "/", "a\x00b", "\xff", strings.Repeat("é", 600), "zookeeper", " "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, r string) {
		if r == "" {
			if ValidateResource(r) == nil {
				t.Fatal("the empty name is accepted")
			}
			return
		}
		name := EscapeResource(r)
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
			t.Fatalf("EscapeResource(%q) = %q: not a single safe znode name", r, name)
		}
		if !utf8.ValidString(name) {
			t.Fatalf("EscapeResource(%q) = %q: not UTF-8", r, name)
		}
		if back, ok := UnescapeResource(name); !ok || back != r {
			t.Fatalf("round trip of %q: %q, %v", r, back, ok)
		}
		err := ValidateResource(r)
		if err == nil && (r == "" || len(r) > MaxResourceLen || !utf8.ValidString(r)) {
			t.Fatalf("ValidateResource(%q) accepted an invalid name", r)
		}
		if err == nil {
			c := &Client{cfg: clientConfig{root: "/zklock"}}
			p, err := c.queuePath(r, false)
			if err != nil || !strings.HasPrefix(p, "/zklock/") || strings.Count(p, "/") != 2 || validateZnodePath(p) != nil {
				t.Fatalf("queuePath(%q) = %q, %v: escapes the root or is not a valid path", r, p, err)
			}
		}
	})
}

// FuzzRawPath checks that the raw-path validator never accepts a path that
// ZooKeeper would reject or that climbs out with "..".
func FuzzRawPath(f *testing.F) {
	for _, s := range []string{"/locks/foo", "/a/../b", "//", "/zookeeper/quota", "/a/./b", "/x\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if validateZnodePath(p) != nil {
			return
		}
		if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//") || strings.ContainsRune(p, 0) {
			t.Fatalf("accepted %q", p)
		}
		for _, seg := range strings.Split(p[1:], "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("accepted %q", p)
			}
		}
	})
}

func TestValidateResource(t *testing.T) {
	for _, ok := range []string{"a", "accounts/42", "é", strings.Repeat("x", MaxResourceLen)} {
		if err := ValidateResource(ok); err != nil {
			t.Errorf("ValidateResource(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("x", MaxResourceLen+1), "a\x00", "\t", "\xc3", "\u0085"} {
		if err := ValidateResource(bad); err == nil {
			t.Errorf("ValidateResource(%q) accepted", bad)
		}
	}
}
