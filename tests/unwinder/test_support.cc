// Shared helpers of the unwinder tests (test_support.h).
#include "test_support.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

namespace cilkprof::unwinder::test {

Range FunctionRange(const void* fn) {
  Dl_info info;
  ElfW(Sym)* symbol = nullptr;
  Range range;
  if (dladdr1(fn, &info, reinterpret_cast<void**>(&symbol), RTLD_DL_SYMENT) != 0 &&
      symbol != nullptr && info.dli_saddr != nullptr) {
    range.lo = reinterpret_cast<uintptr_t>(info.dli_saddr);
    range.hi = range.lo + symbol->st_size;
  }
  return range;
}

}  // namespace cilkprof::unwinder::test
