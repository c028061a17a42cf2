package check

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestList(t *testing.T) {
	var inner List
	inner.Positive("Timeout", -time.Second)
	inner.AtLeast("Peers", 0, 1)
	inner.NotNegative("Interval", 0, "off")
	var outer List
	outer.If(false, "Fine", 1, "never")
	outer.Add("Name", "a b", "no spaces")
	outer.Nested("Params", inner.Err())
	outer.Nested("Other", errors.New("plain"))
	err := fmt.Errorf("wrapped: %w", outer.Err())

	fes := Fields(err)
	var got []string
	for _, fe := range fes {
		got = append(got, fe.Field)
	}
	want := []string{"Name", "Params.Timeout", "Params.Peers", "Other"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
	if s := fes[0].Error(); s != `Name = "a b": no spaces` {
		t.Errorf("string value: %s", s)
	}
	if s := fes[1].Error(); s != "Params.Timeout = -1s: want a positive duration" {
		t.Errorf("duration: %s", s)
	}
	if s := fes[3].Error(); s != "Other: plain" {
		t.Errorf("no value: %s", s)
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "Name" {
		t.Errorf("errors.As finds the first finding: %v", fe)
	}
	var empty List
	if empty.Err() != nil || Fields(errors.New("x")) != nil {
		t.Error("no findings must be nil")
	}
}
