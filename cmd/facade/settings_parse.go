package main

import (
	"cmp"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/facade-dev/facade/auth"
)

// The parsers of the table: each reads one kind of value into its field.

func asText(dst *string) func(string, string) error {
	return func(_, v string) error { *dst = v; return nil }
}

// asTextOr reads a value that defaults to another setting's, read before it.
func asTextOr(dst, other *string) func(string, string) error {
	return func(_, v string) error {
		*dst = cmp.Or(v, *other)
		return nil
	}
}

func asBaseURL(dst *string) func(string, string) error {
	return func(_, v string) error { *dst = strings.TrimRight(v, "/"); return nil }
}

func asList(dst *[]string) func(string, string) error {
	return func(_, v string) error { *dst = splitList(v); return nil }
}

func asFields(dst *[]string) func(string, string) error {
	return func(_, v string) error { *dst = strings.Fields(v); return nil }
}

const (
	positive    = false
	zeroAllowed = true // FACADE_CACHE_STALE=0: never serve stale
)

func asDuration(dst *time.Duration, zeroOK bool) func(string, string) error {
	return func(name, v string) error {
		d, err := time.ParseDuration(v)
		*dst = d
		if err != nil || d < 0 || (d == 0 && !zeroOK) {
			return fmt.Errorf("%s must be a positive duration such as 10s", name)
		}
		return nil
	}
}

// asCount reads a whole number of per things, 0 or more.
func asCount(dst *int, per string) func(string, string) error {
	return func(name, v string) error {
		n, err := strconv.Atoi(v)
		*dst = n
		if err != nil || n < 0 {
			return fmt.Errorf("%s must be a whole number of %s", name, per)
		}
		return nil
	}
}

func asMajorUnits(dst *int64) func(string, string) error {
	return func(name, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		*dst = n
		if err != nil || n <= 0 {
			return fmt.Errorf("%s must be a positive whole number of major units", name)
		}
		return nil
	}
}

func asZeroOrOne(dst *bool) func(string, string) error {
	return func(name, v string) error {
		*dst = v == "1"
		if v != "0" && v != "1" {
			return fmt.Errorf("%s must be 0 or 1", name)
		}
		return nil
	}
}

func asLogLevel(dst *string) func(string, string) error {
	return func(name, v string) error {
		*dst = v
		var level slog.Level
		if level.UnmarshalText([]byte(v)) != nil {
			return fmt.Errorf("%s must be one of debug, info, warn, error", name)
		}
		return nil
	}
}

func asNetworks(dst *[]*net.IPNet) func(string, string) error {
	return func(name, v string) error {
		n, err := parseNetworks(splitList(v))
		*dst = n
		if err != nil {
			return fmt.Errorf("%s must be a comma list of IP addresses or CIDR ranges", name)
		}
		return nil
	}
}

// asSessionKeys reads the keys; auth.ParseKeys names the variable and the
// entry that is wrong. A placeholder of the docs is said to be one.
func asSessionKeys(dst *[][]byte) func(string, string) error {
	return func(name, v string) error {
		entries := splitList(v)
		for i, e := range entries {
			if isPlaceholder(e) {
				return fmt.Errorf("%s entry %d is a placeholder from the documentation: set keys of your own (openssl rand -base64 32)", name, i+1)
			}
		}
		keys, err := auth.ParseKeys(entries)
		*dst = keys
		return err
	}
}

// asTracesBase reads a collector's base URL into the traces URL, when the
// traces endpoint (read before it) did not set one.
func asTracesBase(dst *string) func(string, string) error {
	return func(_, v string) error {
		if *dst == "" && v != "" {
			*dst = strings.TrimRight(v, "/") + "/v1/traces"
		}
		return nil
	}
}

// durationText writes a default as an operator would: 24h, 10m, 2s (not
// Go's 24h0m0s).
func durationText(d time.Duration) string {
	s := d.String()
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return s
}

// parseNetworks reads "10.0.0.0/8" or a single address ("192.0.2.7").
func parseNetworks(list []string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, v := range list {
		if !strings.Contains(v, "/") {
			ip := net.ParseIP(v)
			if ip == nil {
				return nil, fmt.Errorf("not an address: %q", v)
			}
			bits := 128
			if ip.To4() != nil {
				ip, bits = ip.To4(), 32
			}
			out = append(out, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		_, n, err := net.ParseCIDR(v)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
