// Package check is the one shape of a configuration error: which field,
// which value, and what a good value is. Every Validate of the project
// (gossip, node, commons, testnet) returns its findings as Errors, so the
// CLI can name the config.toml key or the flag behind a field.
package check

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// FieldError is one bad value.
type FieldError struct {
	// Field is the Go field, as a path from the struct that was validated
	// ("Params.HistoryGossip", "Gossip.Teams").
	Field string
	// Value is the bad value (one element, for a list).
	Value any
	// Want says what a good value is, or what to change.
	Want string
}

func (e *FieldError) Error() string {
	switch v := e.Value.(type) {
	case nil:
		return fmt.Sprintf("%s: %s", e.Field, e.Want)
	case string:
		return fmt.Sprintf("%s = %q: %s", e.Field, v, e.Want)
	default:
		return fmt.Sprintf("%s = %v: %s", e.Field, v, e.Want)
	}
}

// Errors are the findings of one Validate, in field order.
type Errors []*FieldError

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

// Unwrap lets errors.As find each FieldError.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// List collects findings; its zero value is ready.
type List struct{ errs Errors }

// Add records that field holds a bad value.
func (l *List) Add(field string, value any, want string) {
	l.errs = append(l.errs, &FieldError{Field: field, Value: value, Want: want})
}

// If records the finding when bad holds.
func (l *List) If(bad bool, field string, value any, want string) {
	if bad {
		l.Add(field, value, want)
	}
}

// Positive records a duration that is zero or negative.
func (l *List) Positive(field string, d time.Duration) {
	l.If(d <= 0, field, d, "want a positive duration")
}

// NotNegative records a duration that is negative (zero has a documented
// meaning: the default, or off).
func (l *List) NotNegative(field string, d time.Duration, zero string) {
	l.If(d < 0, field, d, "want a positive duration, or 0 for "+zero)
}

// AtLeast records a count below lo.
func (l *List) AtLeast(field string, n, lo int) {
	l.If(n < lo, field, n, fmt.Sprintf("want at least %d", lo))
}

// Nested adds the findings of a nested Validate, their fields under
// prefix (a struct field name). Another error is added as it is.
func (l *List) Nested(prefix string, err error) {
	if err == nil {
		return
	}
	var es Errors
	if !errors.As(err, &es) {
		l.errs = append(l.errs, &FieldError{Field: prefix, Want: err.Error()})
		return
	}
	for _, e := range es {
		l.Add(prefix+"."+e.Field, e.Value, e.Want)
	}
}

// Err is nil when nothing was found, else the Errors.
func (l *List) Err() error {
	if len(l.errs) == 0 {
		return nil
	}
	return l.errs
}

// Fields returns the FieldErrors in err, wherever they are wrapped.
func Fields(err error) []*FieldError {
	var es Errors
	if errors.As(err, &es) {
		return es
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return []*FieldError{fe}
	}
	return nil
}
