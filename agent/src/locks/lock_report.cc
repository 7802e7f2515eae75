#include "locks/lock_report.h"

#include "locks/lock_table.h"
#include "thread_record.h"

namespace cilkprof::agent::locks {
namespace {

uint64_t Take(const uint64_t* live, uint64_t* sent) {
  const uint64_t now = __atomic_load_n(live, __ATOMIC_RELAXED);
  const uint64_t increment = now - *sent;
  *sent = now;
  return increment;
}

}  // namespace

void AppendLockDeltas(PcResolver* resolver, std::vector<LockDeltaMsg>* out) {
  for (LockRecord* r = g_lock_table.first(); r != nullptr; r = r->all_next) {
    if (r->kind == LockKind::kCond) continue;
    LockDeltaMsg d;
    d.contended = Take(&r->contended, &r->sent_contended);
    d.wait_ns = Take(&r->wait_ns, &r->sent_wait_ns);
    d.blame_ns = Take(&r->blame_ns, &r->sent_blame_ns);
    d.timeouts = Take(&r->timeouts, &r->sent_timeouts);
    // Uncontended (sampled) plus contended (exact): the lock's acquisitions.
    d.acquisitions = Take(&r->acquisitions, &r->sent_acquisitions) + d.contended;
    if (d.contended == 0 && d.wait_ns == 0 && d.blame_ns == 0 && d.timeouts == 0 && d.acquisitions == 0) continue;
    if (!r->resolved) {
      const ResolvedPc where = resolver->ResolveData(r->address);
      r->module_id = where.module_id;
      r->offset = where.offset;
      r->resolved = true;
    }
    d.module_id = r->module_id;
    d.offset = r->offset;
    d.kind = static_cast<uint32_t>(r->kind);
    out->push_back(d);
  }
}

void ResendAllLocks() {
  for (LockRecord* r = g_lock_table.first(); r != nullptr; r = r->all_next) {
    r->sent_contended = r->sent_wait_ns = r->sent_blame_ns = r->sent_timeouts = r->sent_acquisitions = 0;
  }
}

void MeasureOpenWaits(ThreadRecord* threads) {
  const uint64_t now = MonotonicNs();
  for (ThreadRecord* t = threads; t != nullptr; t = t->next) {
    if (__atomic_load_n(&t->waiting_lock, __ATOMIC_ACQUIRE) == 0) continue;
    uint64_t since = __atomic_load_n(&t->waiting_since_ns, __ATOMIC_RELAXED);
    if (t->open_wait_reported_ns > since) since = t->open_wait_reported_ns;
    if (now <= since) continue;
    // The waiting thread never writes this counter: only this, once per final flush.
    __atomic_fetch_add(&t->counters.lock_wait_open_ns, now - since, __ATOMIC_RELAXED);
    t->open_wait_reported_ns = now;
  }
}

void ResetLocksAfterFork() { g_lock_table.ResetAfterFork(); }

}  // namespace cilkprof::agent::locks
