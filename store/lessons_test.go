package store

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/remem/remem/protocol"
)

func TestLessonsCRUD(t *testing.T) {
	s, home := openTest(t)
	text := "The staging database is reset every night"
	own := Lesson{
		Hash: protocol.LessonHash("surprise", text), ID: "L1", Kind: "surprise", Text: text,
		Seen: 3, Strength: 0.875, Updated: t0, Own: true, Published: true,
		Projects: []string{"/src/b", "/src/a", "/src/b"}, Episodes: []string{"one", "two"}, Layer: LayerPersonal,
	}
	cand := Lesson{
		Hash: protocol.LessonHash("error", "go test fails on a cold cache"), Kind: "error", Text: "go test fails on a cold cache",
		Strength: 0.5, Updated: t0, Arrived: t0.Add(time.Hour), Scopes: []string{"team/a", "folder", "team/a"},
		MetBefore: true, Confirmed: true, Layer: LayerDomain,
	}
	for i := 0; i < 60; i++ {
		cand.Episodes = append(cand.Episodes, fmt.Sprintf("episode %d", i))
	}
	if err := s.PutLesson(own); err != nil {
		t.Fatal(err)
	}
	if err := s.PutLesson(cand); err != nil {
		t.Fatal(err)
	}
	if err := s.PutLesson(Lesson{Text: "no hash"}); err == nil {
		t.Fatal("a lesson without a hash was stored")
	}

	got, ok, err := s.GetLesson(own.Hash)
	if err != nil || !ok {
		t.Fatalf("GetLesson: %v %v", ok, err)
	}
	want := own
	want.Projects = []string{"/src/a", "/src/b"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("GetLesson =\n%+v\nwant\n%+v", got, want)
	}
	got, _, _ = s.GetLesson(cand.Hash)
	if len(got.Episodes) != MaxEpisodes || got.Episodes[0] != "episode 10" || got.Episodes[49] != "episode 59" {
		t.Fatalf("episodes not capped to the latest %d: %d, first %q", MaxEpisodes, len(got.Episodes), got.Episodes[0])
	}
	if !reflect.DeepEqual(got.Scopes, []string{"folder", "team/a"}) || !got.Arrived.Equal(cand.Arrived) || !got.MetBefore || !got.Confirmed || got.Own {
		t.Fatalf("candidate = %+v", got)
	}
	if _, ok, _ := s.GetLesson("00000000000000000000000000000000"); ok {
		t.Fatal("found a missing lesson")
	}

	// Update in place.
	own.Seen, own.Strength = 4, protocol.Rise(own.Strength)
	if err := s.PutLesson(own); err != nil {
		t.Fatal(err)
	}
	all, err := s.Lessons()
	if err != nil || len(all) != 2 {
		t.Fatalf("Lessons = %d, %v", len(all), err)
	}
	for _, l := range all {
		if l.Hash == own.Hash && l.Seen != 4 {
			t.Fatalf("update lost: %+v", l)
		}
	}

	// Survives a restart.
	s.Close()
	s2, err := Open(home, Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if all, _ := s2.Lessons(); len(all) != 2 {
		t.Fatalf("after reopen: %d lessons", len(all))
	}
	if err := s2.DeleteLesson(own.Hash); err != nil {
		t.Fatal(err)
	}
	if err := s2.DeleteLesson(own.Hash); err != nil {
		t.Fatalf("deleting twice: %v", err)
	}
	if _, ok, _ := s2.GetLesson(own.Hash); ok {
		t.Fatal("deleted lesson still there")
	}
	if all, _ := s2.Lessons(); len(all) != 1 || all[0].Hash != cand.Hash {
		t.Fatalf("after delete: %+v", all)
	}
}

func TestOwnLessonsSurviveReopen(t *testing.T) {
	s, home := openTest(t)
	if err := s.PutLessons([]Lesson{
		{Hash: "aa", Kind: "error", Text: "one", Own: true},
		{Hash: "bb", Kind: "error", Text: "two"},
		{Hash: "cc", Kind: "error", Text: "three", Own: true},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutLesson(Lesson{Hash: "cc", Kind: "error", Text: "three"}); err != nil { // no longer own
		t.Fatal(err)
	}
	if err := s.DeleteLesson("aa"); err != nil {
		t.Fatal(err)
	}
	s.PutLesson(Lesson{Hash: "dd", Kind: "error", Text: "four", Own: true})
	s.Close()
	s2, err := Open(home, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	own, err := s2.OwnLessons()
	if err != nil || len(own) != 1 || own[0].Hash != "dd" {
		t.Fatalf("own lessons after reopen: %+v %v", own, err)
	}
}
