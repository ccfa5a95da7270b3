package data

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCharCorpus(t *testing.T) {
	c, err := charCorpus([]byte("hello, world!\n")) // 14 characters: train 12, valid 2
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"\n", " ", "!", ",", "d", "e", "h", "l", "o", "r", "w"}; !slices.Equal(c.Vocab, want) {
		t.Errorf("vocab %q, want %q", c.Vocab, want)
	}
	if want := []int{6, 5, 7, 7, 8, 3, 1, 10, 8, 9, 7, 4}; !slices.Equal(c.Train, want) {
		t.Errorf("train %v, want %v", c.Train, want)
	}
	// Held out: n − cut = 2, half 1: valid "!", test "\n".
	if !slices.Equal(c.Valid, []int{2}) || !slices.Equal(c.Test, []int{0}) {
		t.Errorf("valid %v test %v, want [2] [0]", c.Valid, c.Test)
	}
	// Multi-byte characters are single tokens.
	c, err = charCorpus([]byte("été"))
	if err != nil || !slices.Equal(c.Vocab, []string{"t", "é"}) || len(c.Train)+len(c.Valid)+len(c.Test) != 3 {
		t.Errorf("utf-8: %+v, %v", c, err)
	}
	if _, err := charCorpus([]byte{'a', 0xff}); err == nil {
		t.Error("invalid UTF-8 accepted")
	}
}

// The 90/5/5 split on a made-up text of n = 23 characters: cut = 23·9/10 =
// 20, half = (23 − 20)/2 = 1, so train is characters [0, 20), valid [20, 21)
// and test [21, 23). The vocabulary covers the whole text, held-out part
// included ("X", "Y", "Z" occur only there).
func TestCharCorpusSplit(t *testing.T) {
	text := "abcabcabcabcabcabcabXYZ"
	c, err := charCorpus([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"X", "Y", "Z", "a", "b", "c"}; !slices.Equal(c.Vocab, want) {
		t.Errorf("vocab %q, want %q", c.Vocab, want)
	}
	train := []int{3, 4, 5, 3, 4, 5, 3, 4, 5, 3, 4, 5, 3, 4, 5, 3, 4, 5, 3, 4}
	if !slices.Equal(c.Train, train) || !slices.Equal(c.Valid, []int{0}) || !slices.Equal(c.Test, []int{1, 2}) {
		t.Errorf("train %v valid %v test %v; want %v [0] [1 2]", c.Train, c.Valid, c.Test, train)
	}
	// The splits do not share a backing array's spare room: appending to
	// one cannot overwrite the next.
	if cap(c.Train) != 20 || cap(c.Valid) != 1 || cap(c.Test) != 2 {
		t.Errorf("capacities %d %d %d, want 20 1 2", cap(c.Train), cap(c.Valid), cap(c.Test))
	}
	// Sizes for other n: (n, train, valid, test).
	for _, s := range [][4]int{{0, 0, 0, 0}, {1, 0, 0, 1}, {9, 8, 0, 1}, {10, 9, 0, 1}, {20, 18, 1, 1}, {29, 26, 1, 2}, {100, 90, 5, 5}} {
		c, err := charCorpus([]byte(strings.Repeat("a", s[0])))
		if err != nil {
			t.Fatal(err)
		}
		if got := [4]int{s[0], len(c.Train), len(c.Valid), len(c.Test)}; got != s {
			t.Errorf("n = %d: train, valid, test %v, want %v", s[0], got[1:], s[1:])
		}
	}
}

// Reference: Python 3.11.2 on the shared copy of tinyshakespeare/input.txt:
// len(text) = 1115394, sorted(set(text)) has 65 characters
// "\n !$&',-.3:;?ABC…XYZabc…xyz", int(n*0.9) = 1003854, the first ten ids
// [18, 47, 56, 57, 58, 1, 15, 47, 58, 47]; the held-out 111540 characters
// split 55770/55770.
func TestLoadTinyShakespeare(t *testing.T) {
	c, err := LoadTinyShakespeare(sharedData(t, TinyShakespeare))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Train) != 1003854 || len(c.Valid) != 55770 || len(c.Test) != 55770 {
		t.Errorf("train, valid, test: %d, %d, %d characters; want 1003854, 55770, 55770", len(c.Train), len(c.Valid), len(c.Test))
	}
	if got, want := strings.Join(c.Vocab, ""), "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"; got != want {
		t.Errorf("vocab %q, want %q", got, want)
	}
	if want := []int{18, 47, 56, 57, 58, 1, 15, 47, 58, 47}; !slices.Equal(c.Train[:10], want) {
		t.Errorf("first ids %v, want %v", c.Train[:10], want)
	}
}

// Reference: Python 3.11.2 reading the same bytes with
// io.TextIOWrapper(io.BytesIO(b), encoding="utf8") (as open() does) and
// line.split() + ["<eos>"], one vocabulary across the three calls.
func TestWords(t *testing.T) {
	v := newVocab()
	a, err := v.words([]byte("a b\n\n c\r\nd\re\x1cf\u00a0g\u3000h\u200bi\tb"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := v.words([]byte(" z a \n"))
	c, _ := v.words(nil)
	if want := []int{0, 1, 2, 2, 3, 2, 4, 2, 5, 6, 7, 8, 1, 2}; !slices.Equal(a, want) {
		t.Errorf("a = %v, want %v", a, want)
	}
	if want := []int{9, 0, 2}; !slices.Equal(b, want) || len(c) != 0 {
		t.Errorf("b = %v, c = %v", b, c)
	}
	if want := []string{"a", "b", "<eos>", "c", "d", "e", "f", "g", "h\u200bi", "z"}; !slices.Equal(v.list, want) {
		t.Errorf("vocab %q, want %q", v.list, want)
	}
	if _, err := v.words([]byte{0xc3}); err == nil {
		t.Error("invalid UTF-8 accepted")
	}
}

// pySpace is [hex(c) for c in range(0x110000) if chr(c).isspace()] from
// Python 3.11.2.
var pySpace = []rune{0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680,
	0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a,
	0x2028, 0x2029, 0x202f, 0x205f, 0x3000}

func TestIsPySpace(t *testing.T) {
	var got []rune
	for c := rune(0); c < 0x110000; c++ {
		if isPySpace(c) {
			got = append(got, c)
		}
	}
	if !slices.Equal(got, pySpace) {
		t.Errorf("isPySpace holds for %U, want %U", got, pySpace)
	}
}

// The same tiny WikiText-2 under the word_language_model names (train.txt,
// …), the release's names (wiki.train.tokens, …) and a mix of both; the
// registry describes the .txt names, and its sums apply under either name.
func TestLoadWikiText2(t *testing.T) {
	va, te := []byte(" b c \n"), []byte(" d a \n")
	reg := Registry{WikiText2: {{Name: "train.txt"},
		{Name: "valid.txt", Size: int64(len(va)), SHA256: sum(va)},
		{Name: "test.txt", Size: int64(len(te)), SHA256: sum(te)}}}
	for _, names := range [][3]string{
		{"train.txt", "valid.txt", "test.txt"},
		{"wiki.train.tokens", "wiki.valid.tokens", "wiki.test.tokens"},
		{"wiki.train.tokens", "valid.txt", "wiki.test.tokens"},
	} {
		t.Run(strings.Join(names[:], ","), func(t *testing.T) {
			dir := t.TempDir()
			write := func(name, s string) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(names[1], string(va))
			write(names[2], string(te))

			_, err := reg.loadWikiText2(dir)
			want := "data: wikitext-2: " + filepath.Join(dir, "train.txt") + ": no such file (nor wiki.train.tokens): the WikiText-2 training split is not included"
			if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), want) {
				t.Errorf("missing train split: error %v, want %q", err, want)
			}

			write(names[0], "") // no sum registered, but an empty split is refused
			_, err = reg.loadWikiText2(dir)
			if want := filepath.Join(dir, names[0]) + ": no tokens: the train split is empty"; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("empty train split: error %v, want %q", err, want)
			}

			write(names[0], " a b \n = x = \n") // no sum registered: not verified
			c, err := reg.loadWikiText2(dir)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"a", "b", "<eos>", "=", "x", "c", "d"}; !slices.Equal(c.Vocab, want) {
				t.Errorf("vocab %q, want %q", c.Vocab, want)
			}
			if !slices.Equal(c.Train, []int{0, 1, 2, 3, 4, 3, 2}) || !slices.Equal(c.Valid, []int{1, 5, 2}) || !slices.Equal(c.Test, []int{6, 0, 2}) {
				t.Errorf("train %v valid %v test %v", c.Train, c.Valid, c.Test)
			}

			write(names[2], " d b \n") // same size, other bytes
			_, err = reg.loadWikiText2(dir)
			if want := filepath.Join(dir, names[2]) + ": sha256 "; !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), want) {
				t.Errorf("changed %s: error %v, want ErrChecksum naming it", names[2], err)
			}
			os.Remove(filepath.Join(dir, names[2]))
			_, err = reg.loadWikiText2(dir)
			if want := filepath.Join(dir, "test.txt") + ": no such file (nor wiki.test.tokens)"; !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), want) {
				t.Errorf("missing test split: error %v, want %q", err, want)
			}
		})
	}
	// With both names present, S.txt is read.
	dir := t.TempDir()
	for name, s := range map[string]string{"train.txt": " a \n", "wiki.train.tokens": " z \n", "valid.txt": string(va), "test.txt": string(te)} {
		os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644)
	}
	if c, err := reg.loadWikiText2(dir); err != nil || c.Vocab[0] != "a" {
		t.Errorf("both names: %v, vocab %q; want train.txt read", err, c.Vocab)
	}
}

// Reference: the data README (token counts 217,646 and 245,569, matching the
// published WikiText-2 sizes) and Python 3.11.2 with the word_language_model
// tokenisation, valid.txt then test.txt: 13,777 then 18,328 distinct words.
func TestWikiText2Real(t *testing.T) {
	dir := sharedData(t, WikiText2)
	if _, err := os.Stat(filepath.Join(dir, "train.txt")); err == nil {
		t.Skip("train.txt present: the counts below are for valid and test alone")
	}
	_, err := LoadWikiText2(dir)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "train.txt: no such file (nor wiki.train.tokens)") {
		t.Errorf("error %v, want one naming train.txt and wiki.train.tokens", err)
	}
	v := newVocab()
	for _, s := range []struct {
		file          string
		tokens, vocab int
	}{{"valid.txt", 217646, 13777}, {"test.txt", 245569, 18328}} {
		f, _ := Known.file(WikiText2, s.file)
		b, _, err := Known.read(dir, WikiText2, f)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := v.words(b)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != s.tokens || len(v.list) != s.vocab {
			t.Errorf("%s: %d tokens, vocabulary %d; want %d, %d", s.file, len(ids), len(v.list), s.tokens, s.vocab)
		}
	}
}
