#include "function_entry.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>

namespace cilkprof::agent {
namespace {

int32_t ReadS32(const unsigned char* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

FunctionEntry FunctionEntryOf(uintptr_t address) {
  FunctionEntry out;
  dl_find_object object;
  if (_dl_find_object(reinterpret_cast<void*>(address), &object) != 0) return out;
  out.link_map = object.dlfo_link_map;
  const auto* hdr = static_cast<const unsigned char*>(object.dlfo_eh_frame);
  // version 1; eh_frame_ptr pcrel|sdata4; fde_count udata4; table datarel|sdata4.
  if (hdr == nullptr || hdr[0] != 1 || hdr[1] != 0x1b || hdr[2] != 0x03 || hdr[3] != 0x3b) return out;
  uint32_t count;
  std::memcpy(&count, hdr + 8, sizeof count);
  const unsigned char* table = hdr + 12;
  const auto base = reinterpret_cast<intptr_t>(hdr);
  const auto target = static_cast<intptr_t>(address);
  // The last entry whose initial location is <= address.
  uint32_t lo = 0, hi = count;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (base + ReadS32(table + 8 * mid) <= target) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == 0) return out;
  const intptr_t entry = base + ReadS32(table + 8 * (lo - 1));
  const auto* fde = reinterpret_cast<const unsigned char*>(base + ReadS32(table + 8 * (lo - 1) + 4));
  uint32_t length;
  std::memcpy(&length, fde, sizeof length);
  if (length == 0 || length == 0xffffffffu || length < 16) return out;
  // FDE: length, CIE pointer, pc_begin (pcrel sdata4), pc_range (udata4).
  const unsigned char* pc_begin = fde + 8;
  if (reinterpret_cast<intptr_t>(pc_begin) + ReadS32(pc_begin) != entry) return out;  // another encoding
  uint32_t range;
  std::memcpy(&range, fde + 12, sizeof range);
  if (target >= entry + static_cast<intptr_t>(range)) return out;  // in a gap between functions
  out.entry = static_cast<uintptr_t>(entry);
  return out;
}

}  // namespace cilkprof::agent
