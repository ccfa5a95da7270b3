package data

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// 15 made-up tokens 100, 101, …, 114 in 2 streams: n = 7, token 114 dropped,
// stream 0 = 100…106, stream 1 = 107…113. With bptt 4 there are
// ⌈(7−1)/4⌉ = 2 chunks: chunk 0 starts at 0 with seqLen 4, chunk 1 at 4 with
// seqLen min(4, 7−1−4) = 2, as get_batch gives.
func TestBatchifyLMChunk(t *testing.T) {
	ids := make([]int, 15)
	for i := range ids {
		ids[i] = 100 + i
	}
	streams, n, err := Batchify(ids, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113}; n != 7 || !slices.Equal(streams, want) {
		t.Fatalf("Batchify: n = %d, %v; want 7, %v", n, streams, want)
	}
	if got := LMChunks(n, 4); got != 2 {
		t.Fatalf("LMChunks(7, 4) = %d, want 2", got)
	}
	for _, c := range []struct {
		k, seqLen int
		in, tgt   []int32
	}{
		{0, 4, []int32{100, 101, 102, 103, 107, 108, 109, 110}, []int32{101, 102, 103, 104, 108, 109, 110, 111}},
		{1, 2, []int32{104, 105, 111, 112}, []int32{105, 106, 112, 113}},
	} {
		in, tgt, seqLen, err := LMChunk(streams, 2, 4, c.k)
		if err != nil || seqLen != c.seqLen || !slices.Equal(in, c.in) || !slices.Equal(tgt, c.tgt) {
			t.Errorf("chunk %d: seqLen %d, inputs %v, targets %v, %v; want %d, %v, %v", c.k, seqLen, in, tgt, err, c.seqLen, c.in, c.tgt)
		}
	}
	// bptt 3 divides n − 1 = 6: two full chunks, the last one ending with
	// the stream's last target.
	in, tgt, seqLen, err := LMChunk(streams, 2, 3, 1)
	if err != nil || seqLen != 3 || !slices.Equal(in, []int32{103, 104, 105, 110, 111, 112}) || !slices.Equal(tgt, []int32{104, 105, 106, 111, 112, 113}) {
		t.Errorf("bptt 3, chunk 1: %d %v %v %v", seqLen, in, tgt, err)
	}
	// One stream, no tail: the ids themselves.
	if s, n, err := Batchify(ids[:3], 1); err != nil || n != 3 || !slices.Equal(s, []int32{100, 101, 102}) {
		t.Errorf("one stream: %v %d %v", s, n, err)
	}
}

// LMChunks is len(range(0, n−1, bptt)), and the chunks' inputs cover each
// stream's positions 0 … n−2 once.
func TestLMChunksCover(t *testing.T) {
	for n := 0; n <= 12; n++ {
		for bptt := 1; bptt <= 13; bptt++ {
			want := 0
			for i := 0; i < n-1; i += bptt {
				want++
			}
			if got := LMChunks(n, bptt); got != want {
				t.Errorf("LMChunks(%d, %d) = %d, want %d", n, bptt, got, want)
			}
			if n < 2 {
				continue
			}
			streams := make([]int32, 2*n)
			for i := range streams {
				streams[i] = int32(i)
			}
			var seen []int32
			for k := range want {
				in, tgt, seqLen, err := LMChunk(streams, 2, bptt, k)
				if err != nil {
					t.Fatal(err)
				}
				if k < want-1 && seqLen != bptt || seqLen < 1 {
					t.Errorf("n %d bptt %d chunk %d: seqLen %d", n, bptt, k, seqLen)
				}
				for i := range in {
					if tgt[i] != in[i]+1 {
						t.Fatalf("n %d bptt %d chunk %d: target %d after input %d", n, bptt, k, tgt[i], in[i])
					}
				}
				seen = append(seen, in[:seqLen]...)
			}
			if want := streams[:n-1]; !slices.Equal(seen, want) {
				t.Errorf("n %d bptt %d: stream 0 inputs %v, want %v", n, bptt, seen, want)
			}
		}
	}
}

func TestBatchifyLMChunkErrors(t *testing.T) {
	streams := make([]int32, 6)
	for _, c := range []struct {
		err  error
		want string
	}{
		{err3(Batchify([]int{1, 2}, 0)), "Batchify: batch = 0: must be ≥ 1"},
		{err3(Batchify([]int{1, 2}, 3)), "Batchify: len(ids) = 2: must be ≥ batch = 3"},
		{err3(Batchify([]int{1, -2}, 1)), "Batchify: ids[1] = -2: must be in [0, 2147483647]"},
		{err4(LMChunk(streams, 0, 2, 0)), "LMChunk: batch = 0: must be ≥ 1"},
		{err4(LMChunk(streams, 4, 2, 0)), "LMChunk: len(streams) = 6: must be a multiple of batch = 4"},
		{err4(LMChunk(streams, 6, 2, 0)), "LMChunk: stream length len(streams)/batch = 1: must be ≥ 2"},
		{err4(LMChunk(streams, 2, 0, 0)), "LMChunk: bptt = 0: must be ≥ 1"},
		{err4(LMChunk(streams, 2, 2, 1)), "LMChunk: chunk k = 1: must be in [0, 1) for streams of 3 tokens and bptt = 2"},
		{err4(LMChunk(streams, 2, 2, -1)), "chunk k = -1: must be in [0, 1)"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want %q", c.err, c.want)
		}
	}
	if big := int64(math.MaxInt32) + 1; int64(int(big)) == big { // 64-bit int
		if _, _, err := Batchify([]int{1, int(big)}, 2); err == nil || !strings.Contains(err.Error(), "ids[1] = 2147483648: must be in [0, 2147483647]") {
			t.Errorf("id 2³¹: error %v", err)
		}
	}
	// The tail beyond batch·n is not checked: it is dropped.
	if _, n, err := Batchify([]int{1, 2, -3}, 2); err != nil || n != 1 {
		t.Errorf("bad id in the dropped tail: %d %v", n, err)
	}
}

// err3 and err4 return the error of a call with 3 or 4 results.
func err3[A, B any](_ A, _ B, err error) error         { return err }
func err4[A, B, C any](_ A, _ B, _ C, err error) error { return err }
