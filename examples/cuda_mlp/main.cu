// cuda_mlp: a framework-free CUDA training loop for a small MLP, marked up
// with reverie's collector C API (layers, phases, steps, parameters).
// It is the collector's end-to-end test on a GPU machine and an example of
// the C API:
//
//   reverie collect -o trace.pb --warmup 2 --steps 3 -- cuda_mlp
//   cuda_mlp --trace trace.pb          # starts the collector itself
//
// Model: input -> fc1 -> ReLU -> fc2 -> ReLU -> fc3 -> softmax cross-entropy,
// cuBLAS SGEMMs plus hand-written kernels (bias+ReLU, ReLU backward, bias
// gradient, loss, SGD/Adam). Matrices are column-major (cuBLAS's layout):
// activations are features x batch, weights are out x in.
//
// Each step exercises what the collector must see: a host-to-device
// copy (data loading), kernels on the compute stream, an optimizer on a
// second stream ordered by cudaEventRecord/cudaStreamWaitEvent, a memset, a
// device-to-host copy of the loss and a stream synchronization.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "reverie/collector.h"

#define CHECK_CUDA(call)                                                              \
  do {                                                                                \
    cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) {                                                        \
      std::fprintf(stderr, "cuda_mlp: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

#define CHECK_CUBLAS(call)                                                  \
  do {                                                                      \
    cublasStatus_t st_ = (call);                                            \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                     \
      std::fprintf(stderr, "cuda_mlp: %s failed: %d\n", #call, (int)st_);   \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)

namespace {

constexpr int kThreads = 256;
int Blocks(long n) { return static_cast<int>((n + kThreads - 1) / kThreads); }

__global__ void InitUniform(float* p, long n, float scale, unsigned seed) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  p[i] = scale * (static_cast<float>(h & 0xffffff) / 16777216.0f * 2.0f - 1.0f);
}

// y = relu(y + b) in place; y is out x batch.
__global__ void BiasRelu(float* y, const float* b, int out, long n, bool relu) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float v = y[i] + b[i % out];
  y[i] = relu ? fmaxf(v, 0.0f) : v;
}

// dz = dy where the ReLU output was positive.
__global__ void ReluBackward(float* dy, const float* y, long n) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < n && y[i] <= 0.0f) dy[i] = 0.0f;
}

// db[r] = sum over the batch of dz[r, j].
__global__ void BiasGrad(const float* dz, float* db, int out, int batch) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= out) return;
  float s = 0.0f;
  for (int j = 0; j < batch; ++j) s += dz[r + static_cast<long>(j) * out];
  db[r] = s;
}

// Softmax cross-entropy per sample (column); writes dlogits and adds the
// mean loss into *loss.
__global__ void SoftmaxCrossEntropy(const float* logits, const int* labels, float* dlogits,
                                    float* loss, int classes, int batch) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= batch) return;
  const float* z = logits + static_cast<long>(j) * classes;
  float m = z[0];
  for (int c = 1; c < classes; ++c) m = fmaxf(m, z[c]);
  float sum = 0.0f;
  for (int c = 0; c < classes; ++c) sum += expf(z[c] - m);
  const int y = labels[j];
  for (int c = 0; c < classes; ++c) {
    const float p = expf(z[c] - m) / sum;
    dlogits[static_cast<long>(j) * classes + c] = (p - (c == y ? 1.0f : 0.0f)) / batch;
  }
  atomicAdd(loss, (logf(sum) + m - z[y]) / batch);
}

__global__ void Sgd(float* w, const float* g, long n, float lr) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

__global__ void Adam(float* w, const float* g, float* m, float* v, long n, float lr, float b1,
                     float b2, float eps, float c1, float c2) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  m[i] = b1 * m[i] + (1.0f - b1) * g[i];
  v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
  w[i] -= lr * (m[i] / c1) / (sqrtf(v[i] / c2) + eps);
}

struct Param {
  std::string name, layer;
  long n = 0;
  float* w = nullptr;
  float* g = nullptr;
  float* m = nullptr;
  float* v = nullptr;
};

struct Layer {
  std::string name;
  int in = 0, out = 0;
  bool relu = true;
  Param weight, bias;
  float* y = nullptr;   // out x batch (after bias/ReLU)
  float* dy = nullptr;  // gradient w.r.t. y
};

float* DeviceAlloc(long n) {
  float* p = nullptr;
  CHECK_CUDA(cudaMalloc(&p, n * sizeof(float)));
  return p;
}

struct Options {
  int steps = 20;
  int batch = 256;
  int input = 1024;
  int hidden = 2048;
  int classes = 10;
  bool adam = true;
  std::string trace;
};

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--steps" && (v = value())) {
      o->steps = std::atoi(v);
    } else if (a == "--batch" && (v = value())) {
      o->batch = std::atoi(v);
    } else if (a == "--hidden" && (v = value())) {
      o->hidden = std::atoi(v);
    } else if (a == "--optimizer" && (v = value())) {
      o->adam = std::string(v) == "adam";
    } else if (a == "--trace" && (v = value())) {
      o->trace = v;
    } else {
      std::fprintf(stderr,
                   "usage: cuda_mlp [--steps N] [--batch N] [--hidden N] "
                   "[--optimizer sgd|adam] [--trace OUT.pb]\n");
      return false;
    }
  }
  return o->steps > 0 && o->batch > 0 && o->hidden > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!ParseArgs(argc, argv, &opt)) return 2;
  if (!opt.trace.empty()) {
    // API mode: the program starts the collector itself (without
    // CUDA_INJECTION64_PATH); with it, this start is a no-op.
    reverie_configure("REVERIE_OUTPUT", opt.trace.c_str());
    const int started = reverie_start();
    std::printf("collector: %s\n", started == REVERIE_OK ? "collecting"
                                   : started == REVERIE_HOST_ONLY ? "host markers only"
                                                                  : "not collecting");
  }

  cudaStream_t compute, update;
  CHECK_CUDA(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&update, cudaStreamNonBlocking));
  cudaEvent_t grads_ready, weights_ready;
  CHECK_CUDA(cudaEventCreateWithFlags(&grads_ready, cudaEventDisableTiming));
  CHECK_CUDA(cudaEventCreateWithFlags(&weights_ready, cudaEventDisableTiming));
  cublasHandle_t blas;
  CHECK_CUBLAS(cublasCreate(&blas));
  CHECK_CUBLAS(cublasSetStream(blas, compute));

  const int dims[] = {opt.input, opt.hidden, opt.hidden, opt.classes};
  std::vector<Layer> layers(3);
  std::vector<Param*> params;
  for (int l = 0; l < 3; ++l) {
    Layer& L = layers[l];
    L.name = "fc" + std::to_string(l + 1);
    L.in = dims[l];
    L.out = dims[l + 1];
    L.relu = l < 2;
    L.weight = {L.name + ".weight", L.name, static_cast<long>(L.in) * L.out};
    L.bias = {L.name + ".bias", L.name, L.out};
    for (Param* p : {&L.weight, &L.bias}) {
      p->w = DeviceAlloc(p->n);
      p->g = DeviceAlloc(p->n);
      p->m = DeviceAlloc(p->n);
      p->v = DeviceAlloc(p->n);
      CHECK_CUDA(cudaMemsetAsync(p->m, 0, p->n * sizeof(float), compute));
      CHECK_CUDA(cudaMemsetAsync(p->v, 0, p->n * sizeof(float), compute));
      params.push_back(p);
    }
    InitUniform<<<Blocks(L.weight.n), kThreads, 0, compute>>>(L.weight.w, L.weight.n,
                                                              1.0f / std::sqrt(float(L.in)), 17 + l);
    CHECK_CUDA(cudaMemsetAsync(L.bias.w, 0, L.bias.n * sizeof(float), compute));
    L.y = DeviceAlloc(static_cast<long>(L.out) * opt.batch);
    L.dy = DeviceAlloc(static_cast<long>(L.out) * opt.batch);
  }
  for (const Param* p : params) {
    reverie_parameter_typed(p->name.c_str(), p->layer.c_str(), p->n * sizeof(float), "Float");
  }

  // Pinned host batch, refreshed every step (the "data loading").
  const long x_elems = static_cast<long>(opt.input) * opt.batch;
  float* host_x = nullptr;
  int* host_labels = nullptr;
  float* host_loss = nullptr;
  CHECK_CUDA(cudaMallocHost(&host_x, x_elems * sizeof(float)));
  CHECK_CUDA(cudaMallocHost(&host_labels, opt.batch * sizeof(int)));
  CHECK_CUDA(cudaMallocHost(&host_loss, sizeof(float)));
  float* x = DeviceAlloc(x_elems);
  float* dx = DeviceAlloc(x_elems);
  int* labels = nullptr;
  CHECK_CUDA(cudaMalloc(&labels, opt.batch * sizeof(int)));
  float* loss = DeviceAlloc(1);
  const float one = 1.0f, zero = 0.0f;

  unsigned rng = 12345;
  float last_loss = 0.0f;
  for (int it = 0; it < opt.steps; ++it) {
    reverie_step_begin();

    reverie_range_push("data", REVERIE_PHASE_DATA_LOADING);
    for (int j = 0; j < opt.batch; ++j) {
      const int label = static_cast<int>((rng = rng * 1103515245u + 12345u) >> 16) % opt.classes;
      host_labels[j] = label;
      for (int k = 0; k < opt.input; ++k) {
        // Class-dependent signal plus noise, so the loss can fall.
        const float noise = static_cast<float>((rng = rng * 1103515245u + 12345u) >> 16 & 1023) / 1024.0f;
        host_x[static_cast<long>(j) * opt.input + k] = (k % opt.classes == label ? 1.0f : 0.0f) + 0.1f * noise;
      }
    }
    CHECK_CUDA(cudaMemcpyAsync(x, host_x, x_elems * sizeof(float), cudaMemcpyHostToDevice, compute));
    CHECK_CUDA(cudaMemcpyAsync(labels, host_labels, opt.batch * sizeof(int), cudaMemcpyHostToDevice,
                               compute));
    reverie_range_pop();

    // The previous step's update must finish before these weights are read.
    if (it > 0) CHECK_CUDA(cudaStreamWaitEvent(compute, weights_ready, 0));

    const float* input = x;
    for (Layer& L : layers) {
      reverie_layer_push(L.name.c_str(), REVERIE_PHASE_FORWARD);
      CHECK_CUBLAS(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, L.out, opt.batch, L.in, &one,
                               L.weight.w, L.out, input, L.in, &zero, L.y, L.out));
      const long n = static_cast<long>(L.out) * opt.batch;
      BiasRelu<<<Blocks(n), kThreads, 0, compute>>>(L.y, L.bias.w, L.out, n, L.relu);
      reverie_layer_pop();
      input = L.y;
    }
    reverie_layer_push("loss", REVERIE_PHASE_FORWARD);
    CHECK_CUDA(cudaMemsetAsync(loss, 0, sizeof(float), compute));
    SoftmaxCrossEntropy<<<Blocks(opt.batch), kThreads, 0, compute>>>(
        layers[2].y, labels, layers[2].dy, loss, opt.classes, opt.batch);
    reverie_layer_pop();

    for (int l = 2; l >= 0; --l) {
      Layer& L = layers[l];
      reverie_layer_push(L.name.c_str(), REVERIE_PHASE_BACKWARD);
      const long n = static_cast<long>(L.out) * opt.batch;
      if (L.relu) ReluBackward<<<Blocks(n), kThreads, 0, compute>>>(L.dy, L.y, n);
      const float* in = l == 0 ? x : layers[l - 1].y;
      float* din = l == 0 ? dx : layers[l - 1].dy;
      CHECK_CUBLAS(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, L.out, L.in, opt.batch, &one, L.dy,
                               L.out, in, L.in, &zero, L.weight.g, L.out));
      BiasGrad<<<Blocks(L.out), kThreads, 0, compute>>>(L.dy, L.bias.g, L.out, opt.batch);
      if (l > 0) {
        CHECK_CUBLAS(cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, L.in, opt.batch, L.out, &one,
                                 L.weight.w, L.out, L.dy, L.out, &zero, din, L.in));
      }
      reverie_layer_pop();
    }

    // Optimizer on its own stream, ordered after the gradients by an event.
    reverie_range_push("optimizer", REVERIE_PHASE_UPDATE);
    CHECK_CUDA(cudaEventRecord(grads_ready, compute));
    CHECK_CUDA(cudaStreamWaitEvent(update, grads_ready, 0));
    const float c1 = 1.0f - std::pow(0.9f, float(it + 1));
    const float c2 = 1.0f - std::pow(0.999f, float(it + 1));
    for (Param* p : params) {
      if (opt.adam) {
        Adam<<<Blocks(p->n), kThreads, 0, update>>>(p->w, p->g, p->m, p->v, p->n, 1e-3f, 0.9f,
                                                    0.999f, 1e-8f, c1, c2);
      } else {
        Sgd<<<Blocks(p->n), kThreads, 0, update>>>(p->w, p->g, p->n, 0.05f);
      }
    }
    CHECK_CUDA(cudaEventRecord(weights_ready, update));
    reverie_range_pop();

    CHECK_CUDA(cudaMemcpyAsync(host_loss, loss, sizeof(float), cudaMemcpyDeviceToHost, compute));
    CHECK_CUDA(cudaStreamSynchronize(compute));
    last_loss = *host_loss;
    reverie_step_end();
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaGetLastError());
  std::printf("cuda_mlp: %d steps, final loss %.4f\n", opt.steps, last_loss);

  for (Param* p : params) {
    cudaFree(p->w);
    cudaFree(p->g);
    cudaFree(p->m);
    cudaFree(p->v);
  }
  for (Layer& L : layers) {
    cudaFree(L.y);
    cudaFree(L.dy);
  }
  cudaFree(x);
  cudaFree(dx);
  cudaFree(labels);
  cudaFree(loss);
  cudaFreeHost(host_x);
  cudaFreeHost(host_labels);
  cudaFreeHost(host_loss);
  cublasDestroy(blas);
  cudaEventDestroy(grads_ready);
  cudaEventDestroy(weights_ready);
  cudaStreamDestroy(update);
  cudaStreamDestroy(compute);
  if (!opt.trace.empty()) reverie_stop();
  return std::isfinite(last_loss) ? 0 : 1;
}
