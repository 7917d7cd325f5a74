/* A program linked against the CUDA runtime (so LD_PRELOAD detects it as a
 * CUDA program) that makes no call needing a GPU. Under the collector on a
 * machine without a driver it must behave exactly as without, apart from
 * one warning line on stderr. */
#include <cuda_runtime_api.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int version = 0;
  (void)argv;
  cudaRuntimeGetVersion(&version);
  printf("cuda runtime %d, %d args\n", version, argc);
  return 5;
}
