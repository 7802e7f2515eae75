#include "workspan/guarded_hooks.h"

#include <cstddef>
#include <iterator>

#include "instrumentation.h"

namespace cilkprof::agent::workspan {
namespace {

cilkprof_hooks_t g_inner{};
cilkprof_hooks_t g_guarded{};

// Guarded<&cilkprof_hooks_t::name>::Call has the hook's own signature and calls
// g_inner.name inside an InstrumentationScope. Not a tail call: the scope's end runs
// after the hook returns, so the wrapper's frame (kept with frame pointers, see
// workspan.cmake) stays on the stack and unwinding goes through it. The agent
// registers each wrapper's code as the tool's (attach.cc, instrumentation.h): a sample
// in its prologue or epilogue, outside its InstrumentationScope, is the tool's too.
template <auto Member>
struct Guarded;

template <typename... Args, void (*cilkprof_hooks_t::*Member)(Args...)>
struct Guarded<Member> {
  static void Call(Args... args) {
    InstrumentationScope in_tool;
    (g_inner.*Member)(args...);
  }
};

template <auto Member>
void Guard() {
  g_guarded.*Member = g_inner.*Member != nullptr ? &Guarded<Member>::Call : nullptr;
}

#define CILKPROF_GUARD_HOOK(name) &Guard<&cilkprof_hooks_t::name>

// Every member of cilkprof_hooks_t, once.
constexpr void (*kGuardedMembers[])() = {
    CILKPROF_GUARD_HOOK(scope_enter), CILKPROF_GUARD_HOOK(spawn),    CILKPROF_GUARD_HOOK(child_end),
    CILKPROF_GUARD_HOOK(continuation), CILKPROF_GUARD_HOOK(sync_begin), CILKPROF_GUARD_HOOK(sync_end),
    CILKPROF_GUARD_HOOK(scope_exit),   CILKPROF_GUARD_HOOK(func_enter), CILKPROF_GUARD_HOOK(func_exit),
};

#undef CILKPROF_GUARD_HOOK

static_assert(sizeof(cilkprof_hooks_t) == std::size(kGuardedMembers) * sizeof(void (*)()),
              "cilkprof_hooks_t has a hook kGuardedMembers does not wrap: add CILKPROF_GUARD_HOOK(name) for it "
              "(guarded_hooks.h), or its samples are charged to the program's work");

}  // namespace

const cilkprof_hooks_t* GuardHooks(const cilkprof_hooks_t* inner) {
  if (inner == nullptr) return nullptr;
  g_inner = *inner;
  for (void (*guard)() : kGuardedMembers) guard();
  return &g_guarded;
}

}  // namespace cilkprof::agent::workspan
