package models

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

type convModel = func(*model.Scope, *Node) *Node

// convTrainable is the number of trainable values in the store.
func convTrainable(store *model.Store) int {
	n := 0
	for v := range store.IterVariables() {
		if v.Trainable {
			n += v.Shape().Size()
		}
	}
	return n
}

func convImages(n, h, w, c int, seed uint64) *tensors.Tensor {
	r := rand.New(rand.NewPCG(seed, 1))
	data := make([]float32, n*h*w*c)
	for i := range data {
		data[i] = float32(r.NormFloat64())
	}
	return tensors.FromFlatDataAndDimensions(data, n, h, w, c)
}

func convLabels(n, classes int, seed uint64) *tensors.Tensor {
	r := rand.New(rand.NewPCG(seed, 2))
	data := make([]int32, n)
	for i := range data {
		data[i] = int32(r.IntN(classes))
	}
	return tensors.FromFlatDataAndDimensions(data, n)
}

func convNewStore(t testing.TB) *model.Store {
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(42); err != nil {
		t.Fatal(err)
	}
	return store
}

// Expected parameter counts, by hand (weights + biases; BN: scale + offset,
// the running statistics are buffers in PyTorch and not counted):
//
// CNN on 28×28×1, 10 classes: conv1 3·3·1·32+32 = 320, conv2 3·3·32·64+64 =
// 18,496, dense1 (7·7·64)·128+128 = 401,536, dense2 128·10+10 = 1,290;
// total 421,642.
//
// ResNet-20, C input channels, 10 classes, 1×1-projection shortcuts:
// stem 3·3·C·16 + 32; stage 1: 3 blocks × 2 × (3·3·16·16 + 32) = 14,016;
// stage 2: first block 3·3·16·32 + 3·3·32·32 + 1·1·16·32 + 3·64 = 14,528,
// two more blocks 2 × 2 × (3·3·32·32 + 64) = 37,120; stage 3: first block
// 3·3·32·64 + 3·3·64·64 + 1·1·32·64 + 3·128 = 57,728, two more 2 × 2 ×
// (3·3·64·64 + 128) = 147,968; dense 64·10+10 = 650. For C = 3: 464 + 14,016
// + 51,648 + 205,696 + 650 = 272,474; for C = 1: 288 fewer, 272,186.
//
// ResNet-18 (CIFAR, kuangliu), 3 input channels, 10 classes: 11,173,962, as
// counted by PyTorch; the same sum over its layers: stem 1,728+128; stage 1
// 4 × (36,864+128); stage 2 73,728+147,456+8,192+3·256 + 2·(147,456+256);
// stage 3 294,912+589,824+32,768+3·512 + 2·(589,824+512); stage 4
// 1,179,648+2,359,296+131,072+3·1,024 + 2·(2,359,296+1,024); dense 5,130.
func TestConvModelShapesAndParams(t *testing.T) {
	backend := gobackend.GetBackend()
	resnet18 := 1728 + 128 + 4*(36864+128) +
		73728 + 147456 + 8192 + 3*256 + 2*(147456+256) +
		294912 + 589824 + 32768 + 3*512 + 2*(589824+512) +
		1179648 + 2359296 + 131072 + 3*1024 + 2*(2359296+1024) + 5130
	if resnet18 != 11173962 {
		t.Fatalf("hand count of ResNet-18 = %d", resnet18)
	}
	cases := []struct {
		name       string
		m          convModel
		h, w, c, k int
		params     int
	}{
		{"cnn", CNN(10), 28, 28, 1, 10, 421642},
		{"resnet20-mnist", ResNet20(10), 28, 28, 1, 10, 272474 - 288},
		{"resnet20-cifar", ResNet20(10), 32, 32, 3, 10, 272474},
		{"resnet18-cifar", ResNet18(10), 32, 32, 3, 10, 11173962},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "resnet18-cifar" && testing.Short() {
				t.Skip("short")
			}
			store := convNewStore(t)
			exec, err := model.NewExec(backend, store, func(s *model.Scope, x *Node) *Node {
				s.SetTraining(x.Graph(), true)
				return tc.m(s.In("model"), x)
			})
			if err != nil {
				t.Fatal(err)
			}
			out, err := exec.Call(convImages(2, tc.h, tc.w, tc.c, 1))
			if err != nil {
				t.Fatal(err)
			}
			if got := out[0].Shape().Dimensions; len(got) != 2 || got[0] != 2 || got[1] != tc.k || out[0].DType() != dtypes.Float32 {
				t.Errorf("logits shape %s, want (Float32)[2 %d]", out[0].Shape(), tc.k)
			}
			if got := convTrainable(store); got != tc.params {
				t.Errorf("%d trainable parameters, want %d", got, tc.params)
			}
		})
	}
}

// convStep builds one SGD step on the mean cross-entropy, returning the loss
// before the step.
func convStep(m convModel, lr float64) func(s *model.Scope, x, y *Node) *Node {
	return func(s *model.Scope, x, y *Node) *Node {
		g := x.Graph()
		s.SetTraining(g, true)
		logits := m(s.In("model"), x)
		logp := LogSoftmax(logits)
		loss := ReduceAllMean(Neg(ReduceSum(Mul(OneHot(y, logits.Shape().Dim(1), logp.DType()), logp), -1)))
		grads := s.BuildTrainableVariablesGradientsGraph(loss)
		i := 0
		for v := range s.IterVariables() {
			if !v.Trainable || !v.InUseByGraph(g) {
				continue
			}
			v.SetNodeValue(Sub(v.NodeValue(g), MulScalar(grads[i], lr)))
			i++
		}
		return loss
	}
}

func TestConvModelsLearn(t *testing.T) {
	backend := gobackend.GetBackend()
	for _, tc := range []struct {
		name string
		m    convModel
		lr   float64
	}{{"cnn", CNN(10), 0.05}, {"resnet20", ResNet20(10), 0.05}} {
		t.Run(tc.name, func(t *testing.T) {
			store := convNewStore(t)
			exec, err := model.NewExec(backend, store, convStep(tc.m, tc.lr))
			if err != nil {
				t.Fatal(err)
			}
			x, y := convImages(8, 28, 28, 1, 3), convLabels(8, 10, 4)
			var losses []float32
			for range 4 {
				out, err := exec.Call(x, y)
				if err != nil {
					t.Fatal(err)
				}
				losses = append(losses, tensors.MustCopyFlatData[float32](out[0])[0])
			}
			for i := 1; i < len(losses); i++ {
				if !(losses[i] < losses[i-1]) {
					t.Fatalf("losses %v: not decreasing", losses)
				}
			}
		})
	}
}

// BenchmarkConvStep times one training step (forward, gradient and SGD update
// in one exec) at batch 128 on 28×28×1 inputs, on the Go backend with
// num_executors=2.
func BenchmarkConvStep(b *testing.B) {
	for _, tc := range []struct {
		name string
		m    convModel
	}{{"cnn", CNN(10)}, {"resnet20", ResNet20(10)}} {
		b.Run(tc.name, func(b *testing.B) {
			backend, err := gobackend.New("num_executors=2")
			if err != nil {
				b.Fatal(err)
			}
			convBench(b, backend, tc.m)
		})
	}
}

func convBench(b *testing.B, backend compute.Backend, m convModel) {
	store := convNewStore(b)
	exec, err := model.NewExec(backend, store, convStep(m, 0.01))
	if err != nil {
		b.Fatal(err)
	}
	x, y := convImages(128, 28, 28, 1, 5), convLabels(128, 10, 6)
	if _, err := exec.Call(x, y); err != nil { // compile
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := exec.Call(x, y); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/step")
}
