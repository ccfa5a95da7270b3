package data

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Corpus is a tokenised text dataset for language modelling.
type Corpus struct {
	Name               string
	Vocab              []string // token id → token
	Train, Valid, Test []int    // token ids; Test is nil when there is no test split
}

// LoadTinyShakespeare loads Tiny Shakespeare from dir (the folder holding
// input.txt) at the character level, as char-rnn/nanoGPT do: the vocabulary
// is the distinct characters sorted by code point, Train the first
// ⌊0.9·n⌋ characters and Valid the rest (n characters in all). Test is nil.
func LoadTinyShakespeare(dir string) (*Corpus, error) {
	return Known.loadTinyShakespeare(dir)
}

func (r Registry) loadTinyShakespeare(dir string) (*Corpus, error) {
	f, _ := r.file(TinyShakespeare, "input.txt")
	f.Name = "input.txt"
	b, path, err := r.read(dir, TinyShakespeare, f)
	if err != nil {
		return nil, err
	}
	c, err := charCorpus(b)
	if err != nil {
		return nil, &fileError{dataset: TinyShakespeare, path: path, msg: err.Error()}
	}
	return c, nil
}

// charCorpus tokenises UTF-8 text by character and splits it 90/10.
func charCorpus(b []byte) (*Corpus, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("not valid UTF-8")
	}
	text := []rune(string(b))
	set := map[rune]bool{}
	for _, c := range text {
		set[c] = true
	}
	chars := make([]rune, 0, len(set))
	for c := range set {
		chars = append(chars, c)
	}
	slices.Sort(chars)
	id := make(map[rune]int, len(chars))
	vocab := make([]string, len(chars))
	for i, c := range chars {
		id[c] = i
		vocab[i] = string(c)
	}
	ids := make([]int, len(text))
	for i, c := range text {
		ids[i] = id[c]
	}
	// ⌊0.9·n⌋ in integers, which is Python's int(n*0.9) for the real file.
	cut := len(ids) * 9 / 10
	return &Corpus{Name: TinyShakespeare, Vocab: vocab, Train: ids[:cut:cut], Valid: ids[cut:]}, nil
}

// LoadWikiText2 loads word-level WikiText-2 from dir (the folder holding
// train.txt, valid.txt and test.txt) as PyTorch's word_language_model example
// does: each line is split on whitespace and gets a final "<eos>", and the
// vocabulary numbers words in order of first appearance in train, then valid,
// then test. The project's offline copy lacks train.txt; its absence is an
// error naming the file.
func LoadWikiText2(dir string) (*Corpus, error) {
	return Known.loadWikiText2(dir)
}

func (r Registry) loadWikiText2(dir string) (*Corpus, error) {
	c := &Corpus{Name: WikiText2}
	v := newVocab()
	for _, split := range []struct {
		file string
		ids  *[]int
	}{{"train.txt", &c.Train}, {"valid.txt", &c.Valid}, {"test.txt", &c.Test}} {
		f, _ := r.file(WikiText2, split.file)
		f.Name = split.file
		b, path, err := r.read(dir, WikiText2, f)
		if split.file == "train.txt" && errors.Is(err, fs.ErrNotExist) {
			return nil, &fileError{WikiText2, filepath.Join(dir, "train.txt"),
				"no such file: the WikiText-2 training split is not included in the project's offline data (only valid.txt and test.txt are)",
				"put the word_language_model copy of wikitext-2 (train.txt, valid.txt, test.txt) there, or point --data (or SALSA_DATA) at a folder holding it",
				fs.ErrNotExist}
		}
		if err != nil {
			return nil, err
		}
		if *split.ids, err = v.words(b); err != nil {
			return nil, &fileError{dataset: WikiText2, path: path, msg: err.Error()}
		}
	}
	c.Vocab = v.list
	return c, nil
}

// vocab numbers tokens in order of first appearance.
type vocab struct {
	id   map[string]int
	list []string
}

func newVocab() *vocab { return &vocab{id: map[string]int{}} }

func (v *vocab) add(w string) int {
	if i, ok := v.id[w]; ok {
		return i
	}
	v.id[w] = len(v.list)
	v.list = append(v.list, w)
	return len(v.list) - 1
}

// words tokenises UTF-8 text as Python's
//
//	for line in open(path, encoding="utf8"): words = line.split() + ["<eos>"]
//
// Lines end at "\n", "\r\n" or "\r" (universal newlines) and a last line
// without a line break counts; words are separated by Python's whitespace.
func (v *vocab) words(b []byte) ([]int, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("not valid UTF-8")
	}
	var ids []int
	s := string(b)
	for len(s) > 0 {
		end := strings.IndexAny(s, "\r\n")
		line, next := s, ""
		if end >= 0 {
			line, next = s[:end], s[end+1:]
			if s[end] == '\r' && strings.HasPrefix(next, "\n") {
				next = next[1:]
			}
		}
		for _, w := range strings.FieldsFunc(line, isPySpace) {
			ids = append(ids, v.add(w))
		}
		ids = append(ids, v.add("<eos>"))
		s = next
	}
	return ids, nil
}

// isPySpace reports whether Python's str.isspace holds for c: Go's
// unicode.IsSpace plus the ASCII separators U+001C to U+001F.
func isPySpace(c rune) bool {
	return unicode.IsSpace(c) || (c >= 0x1c && c <= 0x1f)
}
