package main

import (
	"fmt"
	"os"
	"regexp"
	"testing"
)

// virtualTestName is the one test testing.Main runs for inVirtualTime.
const virtualTestName = "RememVirtualTime"

// inVirtualTime runs f with a *testing.T, which a synctest bubble (virtual
// time: testnet.RunVirtual) needs and only the testing package makes, and
// ends the process: with status 0 when f returns nil, else 1 after
// printing the error as every command does. Go runs a bubble for a test
// only, so this goes through testing.Main, kept by the testing package
// for programs that run tests themselves. testing.Main reads its own
// flags from os.Args and prints PASS or FAIL on os.Stdout, so it gets
// neither; the app's writer keeps the *os.File stdout was.
func inVirtualTime(f func(t *testing.T) error) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "remem: opening", os.DevNull+":", err)
		os.Exit(1)
	}
	os.Stdout = devnull
	os.Args = []string{os.Args[0], "-test.run=^" + virtualTestName + "$"}
	testing.Main(regexp.MatchString, []testing.InternalTest{{
		Name: virtualTestName,
		F: func(t *testing.T) {
			if err := f(t); err != nil {
				fmt.Fprintln(os.Stderr, "remem:", err)
				t.Fail()
			}
		},
	}}, nil, nil)
}
