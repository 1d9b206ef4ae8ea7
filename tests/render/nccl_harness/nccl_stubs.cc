// The few NCCL runtime symbols the topology loader links against, outside src/graph: logging, parameters from
// the environment and the cpuset helpers. Behaviour matches NCCL's for what the loader uses (src/debug.cc,
// src/misc/param.cc, src/os/linux.cc); every WARN and INFO line goes to stderr so a test can read it.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>
#include "debug.h"
#include "os.h"

int ncclDebugLevel = NCCL_LOG_INFO;
uint64_t ncclDebugMask = ~0ULL;
thread_local int ncclDebugNoWarn = 0;

// Allocation traces: NCCL_ALLOC, and NCCL_ALLOC_HOST (0x20000, NCCL 2.30 on; no subsystem uses the bit before)
static const unsigned long allocationTraces = NCCL_ALLOC | 0x20000UL;

static void logLine(ncclDebugLogLevel level, unsigned long flags, const char* fmt, va_list args) {
  if (level == NCCL_LOG_WARN && ncclDebugNoWarn != 0) level = NCCL_LOG_INFO;
  if (level != NCCL_LOG_WARN && level != NCCL_LOG_INFO) return;
  if (flags & allocationTraces) return;
  fprintf(stderr, "NCCL %s ", level == NCCL_LOG_WARN ? "WARN" : "INFO");
  vfprintf(stderr, fmt, args);
  fprintf(stderr, "\n");
}

// NCCL 2.30 on: WARN, INFO and TRACE call ncclDebugLogInternal
void ncclDebugLogInternal(ncclDebugLogLevel level, unsigned long flags, const char* file, const char* func, int line,
                          const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  logLine(level, flags, fmt, args);
  va_end(args);
}

// NCCL up to 2.29 (the default source, Debian's nvidia-nccl): they call ncclDebugLog
void ncclDebugLog(ncclDebugLogLevel level, unsigned long flags, const char* filefunc, int line, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  logLine(level, flags, fmt, args);
  va_end(args);
}

const char* ncclGetEnv(const char* name) { return getenv(name); }

int64_t ncclLoadParam(char const* env, int64_t deftVal, int64_t uninitialized, int64_t* cache, int8_t* noCache) {
  if (*cache != uninitialized) return *cache;
  const char* str = getenv(env);
  int64_t value = deftVal;
  if (str && strlen(str) > 0) {
    errno = 0;
    value = strtoll(str, nullptr, 0);
    if (errno) value = deftVal;
  }
  *cache = value;
  return value;
}

void ncclOsCpuZero(ncclAffinity& affinity) { CPU_ZERO(&affinity); }
void ncclOsCpuSet(ncclAffinity& affinity, int cpu) { CPU_SET(cpu, &affinity); }
