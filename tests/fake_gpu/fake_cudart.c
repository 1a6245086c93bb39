/* A CUDA runtime stand-in for tests on machines without a GPU: "device" memory is host memory,
 * events read the host clock. Only what plumb's NCCL backend loads, with the signatures of
 * cuda_runtime_api.h. Never a measurement of anything: it lets the backend's own logic run. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int cudaError_t;

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

cudaError_t cudaGetDeviceCount(int* count) { *count = 1; return 0; }
cudaError_t cudaSetDevice(int device) { return device == 0 ? 0 : 101; /* invalid device */ }
cudaError_t cudaMalloc(void** p, size_t bytes) { *p = malloc(bytes); return *p ? 0 : 2; }
cudaError_t cudaFree(void* p) { free(p); return 0; }
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, int kind) {
  (void)kind;
  memmove(dst, src, bytes);
  return 0;
}
cudaError_t cudaMemset(void* p, int value, size_t bytes) { memset(p, value, bytes); return 0; }
cudaError_t cudaStreamCreate(void** stream) { *stream = malloc(1); return 0; }
cudaError_t cudaStreamDestroy(void* stream) { free(stream); return 0; }
cudaError_t cudaStreamSynchronize(void* stream) { (void)stream; return 0; }
cudaError_t cudaEventCreate(void** event) { *event = calloc(1, sizeof(double)); return 0; }
cudaError_t cudaEventDestroy(void* event) { free(event); return 0; }
cudaError_t cudaEventRecord(void* event, void* stream) {
  (void)stream;
  *(double*)event = now_seconds();
  return 0;
}
cudaError_t cudaEventSynchronize(void* event) { (void)event; return 0; }
cudaError_t cudaEventElapsedTime(float* ms, void* start, void* stop) {
  *ms = (float)((*(double*)stop - *(double*)start) * 1e3);
  return 0;
}
const char* cudaGetErrorString(cudaError_t e) { return e == 0 ? "no error" : "fake CUDA error"; }
cudaError_t cudaRuntimeGetVersion(int* version) { *version = 12040; return 0; }
