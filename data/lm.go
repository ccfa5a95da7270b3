package data

import (
	"fmt"
	"math"
)

// Language-model batching as in PyTorch's word_language_model example:
//
//	def batchify(data, bsz):
//	    nbatch = data.size(0) // bsz
//	    data = data.narrow(0, 0, nbatch * bsz)
//	    return data.view(bsz, -1).t().contiguous()    # [nbatch, bsz]
//
//	def get_batch(source, i):
//	    seq_len = min(args.bptt, len(source) - 1 - i)
//	    data = source[i:i+seq_len]                    # [seq_len, bsz]
//	    target = source[i+1:i+1+seq_len].view(-1)
//	    return data, target
//
//	for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)): ...
//
// The functions here keep the same streams and chunks but lay them out batch
// first: stream b is row b, and a chunk is [batch, seqLen] rather than
// PyTorch's time-first [seqLen, batch].

// Batchify cuts ids into batch streams of n = ⌊len(ids)/batch⌋ consecutive
// tokens each and returns them as one row-major [batch][n] slice: row b,
// streams[b·n : (b+1)·n], is ids[b·n : (b+1)·n]. The last len(ids) − batch·n
// tokens are dropped, as batchify drops them. It fails unless batch ≥ 1,
// len(ids) ≥ batch (so that n ≥ 1) and every id is in [0, 2³¹−1].
func Batchify(ids []int, batch int) (streams []int32, n int, err error) {
	if batch < 1 {
		return nil, 0, fmt.Errorf("data: Batchify: batch = %d: must be ≥ 1", batch)
	}
	if len(ids) < batch {
		return nil, 0, fmt.Errorf("data: Batchify: len(ids) = %d: must be ≥ batch = %d, or the streams are empty", len(ids), batch)
	}
	n = len(ids) / batch
	streams = make([]int32, batch*n)
	for i, id := range ids[:batch*n] {
		if id < 0 || id > math.MaxInt32 {
			return nil, 0, fmt.Errorf("data: Batchify: ids[%d] = %d: must be in [0, %d]", i, id, math.MaxInt32)
		}
		streams[i] = int32(id)
	}
	return streams, n, nil
}

// LMChunks returns the number of chunks of streams of n tokens with BPTT
// length bptt: ⌈(n−1)/bptt⌉, the length of Python's range(0, n−1, bptt).
// It is 0 if n < 2 or bptt < 1.
func LMChunks(n, bptt int) int {
	if n < 2 || bptt < 1 {
		return 0
	}
	return (n-2)/bptt + 1
}

// LMChunk returns chunk k of the [batch][n] streams that [Batchify] made
// (n = len(streams)/batch), for BPTT length bptt, as get_batch(source, k·bptt)
// does: with start s = k·bptt and
//
//	seqLen = min(bptt, n − 1 − s),
//
// inputs and targets are row-major [batch][seqLen] slices with
//
//	inputs[b·seqLen + t]  = streams[b·n + s + t]
//	targets[b·seqLen + t] = streams[b·n + s + t + 1]
//
// so the target of each input token is the token after it in its stream.
// Every chunk but the last has seqLen = bptt; the last has
// n − 1 − (LMChunks(n, bptt)−1)·bptt ∈ [1, bptt] (shorter when bptt does not
// divide n − 1). Over k = 0 … LMChunks(n, bptt)−1 the chunks cover each
// stream's positions 0 … n−2 once as inputs. It fails unless batch ≥ 1,
// len(streams) is a positive multiple of batch with n ≥ 2, bptt ≥ 1 and k is
// in [0, LMChunks(n, bptt)).
func LMChunk(streams []int32, batch, bptt, k int) (inputs, targets []int32, seqLen int, err error) {
	if batch < 1 {
		return nil, nil, 0, fmt.Errorf("data: LMChunk: batch = %d: must be ≥ 1", batch)
	}
	if len(streams)%batch != 0 {
		return nil, nil, 0, fmt.Errorf("data: LMChunk: len(streams) = %d: must be a multiple of batch = %d", len(streams), batch)
	}
	n := len(streams) / batch
	if n < 2 {
		return nil, nil, 0, fmt.Errorf("data: LMChunk: stream length len(streams)/batch = %d: must be ≥ 2 (an input and its target)", n)
	}
	if bptt < 1 {
		return nil, nil, 0, fmt.Errorf("data: LMChunk: bptt = %d: must be ≥ 1", bptt)
	}
	chunks := LMChunks(n, bptt)
	if k < 0 || k >= chunks {
		return nil, nil, 0, fmt.Errorf("data: LMChunk: chunk k = %d: must be in [0, %d) for streams of %d tokens and bptt = %d", k, chunks, n, bptt)
	}
	s := k * bptt // < n − 1 since k < ⌈(n−1)/bptt⌉
	seqLen = min(bptt, n-1-s)
	inputs = make([]int32, batch*seqLen)
	targets = make([]int32, batch*seqLen)
	for b := range batch {
		row := streams[b*n+s : b*n+s+seqLen+1]
		copy(inputs[b*seqLen:(b+1)*seqLen], row[:seqLen])
		copy(targets[b*seqLen:(b+1)*seqLen], row[1:])
	}
	return inputs, targets, seqLen, nil
}
