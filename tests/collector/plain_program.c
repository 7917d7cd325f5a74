/* An ordinary program for the LD_PRELOAD test: prints to stdout and
 * stderr, reads its environment and arguments, creates a thread-free
 * pipeline of output, and exits with a chosen status. Under
 * LD_PRELOAD=libreverie_collector.so every byte and the status must be the
 * same as without it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  int status = argc > 1 ? atoi(argv[1]) : 0;
  printf("plain program, %d args\n", argc);
  for (int i = 0; i < argc; ++i) printf("arg %d: %s\n", i, i == 0 ? "(self)" : argv[i]);
  const char* home = getenv("REVERIE_PLAIN_VALUE");
  printf("value: %s\n", home ? home : "(unset)");
  fprintf(stderr, "to stderr\n");
  /* A program that inspects CUDA-related variables must see them as set by
   * its caller, not by the collector. */
  const char* inj = getenv("NVTX_INJECTION64_PATH");
  printf("nvtx injection: %s\n", inj ? inj : "(unset)");
  return status;
}
