// Package data loads the datasets of the paper's experiments (MNIST, CIFAR-10
// and WikiText-2; fig. fig:cifar_results) and two small extras: MNIST and
// Fashion-MNIST (IDX), CIFAR-10 (binary version), Tiny Shakespeare
// (characters) and WikiText-2 (words).
//
// # Layout
//
// A data root holds one folder per dataset, named as in [MNIST],
// [FashionMNIST], [CIFAR10], [TinyShakespeare] and [WikiText2]:
//
//	<root>/mnist/train-images-idx3-ubyte.gz  (and the three other IDX files)
//	<root>/fashion-mnist/...
//	<root>/cifar-10-batches-bin/data_batch_{1..5}.bin, test_batch.bin
//	<root>/tinyshakespeare/input.txt
//	<root>/wikitext-2/{train,valid,test}.txt  (or wiki.{train,valid,test}.tokens)
//
// [Resolve] turns the --data flag, the SALSA_DATA variable or the MNIST copy
// shipped in the repository (data/mnist) into the folder of one dataset; the
// loaders take that folder.
//
// # Verification
//
// Every file listed in [Known] with a SHA-256 is checked (size, then
// SHA-256) before it is parsed; a mismatch is an error wrapping
// [ErrChecksum] and a missing file one wrapping [fs.ErrNotExist], each naming
// the file and saying what to do. Files without a known checksum (the CIFAR-10
// batches and WikiText-2's train.txt) are checked only for their size, where
// known, and their structure.
//
// # Training helpers
//
// [SyntheticCIFAR10] makes random data of CIFAR-10's shape from a seed.
// [Images.Float32] gives normalised features in the stored CHW order and
// [Images.Float32HWC] channel last; [AugmentCropFlip] (with [CropFlip],
// [AugmentCropFlipBatch] and [BlackFill]) is the random crop and horizontal
// flip of torchvision used for CIFAR-10. [Batchify], [LMChunks] and [LMChunk]
// lay out a token sequence for a language model as PyTorch's
// word_language_model example does.
//
// # Download
//
// [Download] fetches the files of a dataset from a mirror into a temporary
// file, verifies it and only then renames it into place.
package data
