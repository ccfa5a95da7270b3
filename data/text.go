package data

import (
	"errors"
	"io/fs"
	"os"
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
	Train, Valid, Test []int    // token ids of each split
	// Files are the digests of the files the loader read, in the order
	// read.
	Files []FileDigest
}

// LoadTinyShakespeare loads Tiny Shakespeare from dir (the folder holding
// input.txt) at the character level, as char-rnn/nanoGPT do: the vocabulary
// is the distinct characters of the whole text sorted by code point, and with
// n characters in all, in integer arithmetic,
//
//	cut  = n·9/10           (⌊0.9·n⌋; Python's int(n*0.9) for the real file)
//	half = (n − cut)/2
//	Train = characters [0, cut)
//	Valid = characters [cut, cut+half)
//	Test  = characters [cut+half, n)
//
// Train is the usual first 90%; the held-out last 10% is cut in two, Valid
// its first ⌊(n−cut)/2⌋ characters and Test the other ⌈(n−cut)/2⌉. For the
// real file (n = 1,115,394) that is 1,003,854, 55,770 and 55,770 characters.
func LoadTinyShakespeare(dir string) (*Corpus, error) {
	return Known.loadTinyShakespeare(dir)
}

func (r Registry) loadTinyShakespeare(dir string) (*Corpus, error) {
	if err := checkDir(TinyShakespeare, dir); err != nil {
		return nil, err
	}
	f, _ := r.file(TinyShakespeare, "input.txt")
	f.Name = "input.txt"
	b, d, err := r.read(dir, TinyShakespeare, f)
	if err != nil {
		return nil, err
	}
	c, err := charCorpus(b)
	if err != nil {
		return nil, &fileError{dataset: TinyShakespeare, path: d.Path, msg: err.Error()}
	}
	c.Files = []FileDigest{d}
	return c, nil
}

// charCorpus tokenises UTF-8 text by character and splits it 90/5/5 as
// [LoadTinyShakespeare] documents.
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
	n := len(ids)
	cut := n * 9 / 10
	mid := cut + (n-cut)/2
	return &Corpus{Name: TinyShakespeare, Vocab: vocab,
		Train: ids[:cut:cut], Valid: ids[cut:mid:mid], Test: ids[mid:n:n]}, nil
}

// LoadWikiText2 loads word-level WikiText-2 from dir as PyTorch's
// word_language_model example does: each line is split on whitespace and gets
// a final "<eos>", and the vocabulary numbers words in order of first
// appearance in train, then valid, then test.
//
// Each split S (train, valid, test) is read from S.txt, the name the
// word_language_model example uses, or, if that file does not exist, from
// wiki.S.tokens, the name in the wikitext-2-v1 release; the two hold the same
// bytes (the example ships the release's files renamed), so both are checked
// against the registry entry of S.txt. The project's offline copy lacks the
// training split; a split under neither name is an error wrapping
// [fs.ErrNotExist] that names both files looked for.
func LoadWikiText2(dir string) (*Corpus, error) {
	return Known.loadWikiText2(dir)
}

// wikiText2Names returns the two accepted file names of a WikiText-2 split:
// the word_language_model name (also the registry's) and the release's.
func wikiText2Names(split string) (example, release string) {
	return split + ".txt", "wiki." + split + ".tokens"
}

func (r Registry) loadWikiText2(dir string) (*Corpus, error) {
	if err := checkDir(WikiText2, dir); err != nil {
		return nil, err
	}
	c := &Corpus{Name: WikiText2}
	v := newVocab()
	for _, split := range []struct {
		name string
		ids  *[]int
	}{{"train", &c.Train}, {"valid", &c.Valid}, {"test", &c.Test}} {
		example, release := wikiText2Names(split.name)
		// The entry of S.txt describes wiki.S.tokens too. An entry without
		// a size or SHA-256 (train.txt in Known) means that one is not
		// known, and the file is then not verified.
		f, _ := r.file(WikiText2, example)
		f.Name = example
		if _, err := os.Stat(filepath.Join(dir, example)); errors.Is(err, fs.ErrNotExist) {
			if _, err := os.Stat(filepath.Join(dir, release)); errors.Is(err, fs.ErrNotExist) {
				msg := "no such file (nor " + release + ")"
				if split.name == "train" {
					msg += ": the WikiText-2 training split is not included in the project's offline data (only valid.txt and test.txt are)"
				}
				return nil, &fileError{WikiText2, filepath.Join(dir, example), msg,
					"put a copy of WikiText-2 there (train.txt, valid.txt, test.txt as in PyTorch's word_language_model, or wiki.train.tokens, wiki.valid.tokens, wiki.test.tokens from wikitext-2-v1), or point --data (or SALSA_DATA) at a folder holding one in " + WikiText2 + "/",
					fs.ErrNotExist}
			}
			f.Name = release
		}
		b, d, err := r.read(dir, WikiText2, f)
		if err != nil {
			return nil, err
		}
		c.Files = append(c.Files, d)
		if *split.ids, err = v.words(b); err != nil {
			return nil, &fileError{dataset: WikiText2, path: d.Path, msg: err.Error()}
		}
		if len(*split.ids) == 0 {
			return nil, &fileError{dataset: WikiText2, path: d.Path, msg: "no tokens: the " + split.name + " split is empty"}
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
