// OmpThread records and the per-thread pools of task and region records
// (ompt_records.h). Everything here runs in OMPT callbacks on program threads: the
// hot path (a task's record taken and released) touches only the calling thread's
// own lists; a lock is taken once per kPoolBatch records, when a list runs dry or
// grows past two batches.
#include "ompt/ompt_records.h"

#include <pthread.h>

#include <new>

#include "ompt/ompt_runtime_view.h"

namespace cilkprof::agent::ompt {
namespace {

// A free list of records of one kind, linked through their first word (a free record
// holds nothing else that anyone reads).
struct FreeList {
  void* head = nullptr;
  uint32_t length = 0;
};

void* Pop(FreeList* list) {
  void* item = list->head;
  list->head = *static_cast<void**>(item);
  --list->length;
  return item;
}

void Push(FreeList* list, void* item) {
  *static_cast<void**>(item) = list->head;
  list->head = item;
  ++list->length;
}

// A chain of kPoolBatch free records, kept whole in the shared reserve.
struct Batch {
  void* head;
  Batch* next;
};

// The shared reserve of one record kind: batches handed back by threads whose list
// grew (they release more than they take) or that ended.
struct Reserve {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  Batch* full = nullptr;   // batches of records
  Batch* spare = nullptr;  // empty Batch cells, reused (never freed)
};

Reserve g_task_reserve;
Reserve g_region_reserve;

// What a thread owns: its OmpThread and its free lists. Never freed: a thread that
// ends leaves it on g_threads for the next thread that begins (threads come and go
// with omp_set_num_threads and nested regions; their number alive is bounded).
struct ThreadSlot {
  OmpThread thread;
  FreeList tasks;
  FreeList regions;
  int64_t tasks_taken = 0, tasks_released = 0;      // this slot's own counts
  int64_t regions_taken = 0, regions_released = 0;  // (read racily by Live*)
  ThreadSlot* next = nullptr;                       // g_threads
  bool in_use = false;                              // under g_threads_mu
  bool numbered = false;                            // worker_id set (under g_threads_mu)
};

pthread_mutex_t g_threads_mu = PTHREAD_MUTEX_INITIALIZER;
ThreadSlot* g_threads = nullptr;  // every slot ever made; published with release stores
uint32_t g_next_worker_id = 0;    // under g_threads_mu

__thread ThreadSlot* tls_slot __attribute__((tls_model("initial-exec"))) = nullptr;

// Takes a batch from the reserve into `list`, or makes kPoolBatch records of `size`
// bytes with one allocation. False when memory ran out.
bool Refill(FreeList* list, Reserve* reserve, size_t size) {
  pthread_mutex_lock(&reserve->mu);
  Batch* batch = reserve->full;
  if (batch != nullptr) {
    reserve->full = batch->next;
    void* head = batch->head;
    batch->next = reserve->spare;
    reserve->spare = batch;
    pthread_mutex_unlock(&reserve->mu);
    for (void* item = head; item != nullptr;) {
      void* next = *static_cast<void**>(item);
      Push(list, item);
      item = next;
    }
    return true;
  }
  pthread_mutex_unlock(&reserve->mu);
  // Never freed: records are reused for the life of the process.
  auto* block = static_cast<unsigned char*>(::operator new(size * kPoolBatch, std::nothrow));
  if (block == nullptr) return false;
  for (uint32_t i = 0; i < kPoolBatch; ++i) Push(list, block + i * size);
  return true;
}

// Moves up to kPoolBatch records (all of them if `all`) from `list` to the reserve.
void HandBack(FreeList* list, Reserve* reserve, bool all) {
  while (list->length > 0) {
    void* head = nullptr;
    for (uint32_t i = 0; i < kPoolBatch && list->length > 0; ++i) {
      void* item = Pop(list);
      *static_cast<void**>(item) = head;
      head = item;
    }
    pthread_mutex_lock(&reserve->mu);
    Batch* batch = reserve->spare;
    if (batch != nullptr) {
      reserve->spare = batch->next;
    } else {
      batch = new (std::nothrow) Batch;
    }
    if (batch != nullptr) {
      batch->head = head;
      batch->next = reserve->full;
      reserve->full = batch;
    }
    pthread_mutex_unlock(&reserve->mu);
    // No cell for the batch (out of memory): the records stay unused, a leak of one
    // batch rather than a failure.
    if (!all) return;
  }
}

ThreadSlot* TakeSlot() {
  pthread_mutex_lock(&g_threads_mu);
  ThreadSlot* slot = nullptr;
  for (ThreadSlot* s = g_threads; s != nullptr; s = s->next) {
    if (!s->in_use) {
      slot = s;
      break;
    }
  }
  if (slot == nullptr) {
    slot = new (std::nothrow) ThreadSlot;
    if (slot != nullptr) {
      slot->next = g_threads;
      __atomic_store_n(&g_threads, slot, __ATOMIC_RELEASE);
    }
  }
  if (slot != nullptr) {
    slot->in_use = true;
    // worker_id: the slot's number, stable for its life (ids stay below the most
    // threads ever alive at once).
    if (!slot->numbered) {
      slot->thread.worker.worker_id = g_next_worker_id++;
      slot->numbered = true;
    }
  }
  pthread_mutex_unlock(&g_threads_mu);
  return slot;
}

// The calling thread's slot, made on first use (a callback on a thread libomp did not
// announce with thread_begin: never seen, but cheap to survive).
ThreadSlot* Slot() {
  ThreadSlot* slot = tls_slot;
  if (__builtin_expect(slot != nullptr, 1)) return slot;
  BeginOmpThread(CILKPROF_STATE_WORKING);
  return tls_slot;
}

bool CountsAsWorking(uint32_t state) {
  return state == CILKPROF_STATE_WORKING || state == CILKPROF_STATE_OVERHEAD;
}

}  // namespace

OmpThread* CurrentOmpThread() {
  ThreadSlot* slot = tls_slot;
  return slot != nullptr ? &slot->thread : nullptr;
}

OmpThread* BeginOmpThread(uint32_t first_state) {
  if (tls_slot != nullptr) return &tls_slot->thread;
  ThreadSlot* slot = TakeSlot();
  if (slot == nullptr) return nullptr;
  OmpThread* t = &slot->thread;
  t->worker.state = CILKPROF_STATE_NOT_A_WORKER;
  t->worker.segment = nullptr;
  t->worker.tool_path = 0;
  t->task_path = nullptr;
  t->current_task = nullptr;
  AddWorkers(1);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  tls_slot = slot;  // the handler sees the record from here on
  SetWorkerState(t, first_state);
  return t;
}

void EndOmpThread() {
  ThreadSlot* slot = tls_slot;
  if (slot == nullptr) return;
  SetWorkerState(&slot->thread, CILKPROF_STATE_NOT_A_WORKER);
  tls_slot = nullptr;  // the handler no longer reads the slot
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  AddWorkers(-1);
  HandBack(&slot->tasks, &g_task_reserve, /*all=*/true);
  HandBack(&slot->regions, &g_region_reserve, /*all=*/true);
  slot->thread.current_task = nullptr;
  slot->thread.task_path = nullptr;
  pthread_mutex_lock(&g_threads_mu);
  slot->in_use = false;
  pthread_mutex_unlock(&g_threads_mu);
}

void ForgetOtherThreadsAfterFork() {
  pthread_mutex_init(&g_threads_mu, nullptr);
  pthread_mutex_init(&g_task_reserve.mu, nullptr);
  pthread_mutex_init(&g_region_reserve.mu, nullptr);
  ThreadSlot* self = tls_slot;
  for (ThreadSlot* s = g_threads; s != nullptr; s = s->next) {
    if (s != self) s->in_use = false;
  }
  const bool working = self != nullptr && CountsAsWorking(self->thread.worker.state);
  SetCounts(self != nullptr ? 1 : 0, working ? 1 : 0);
}

void SetWorkerState(OmpThread* t, uint32_t state) {
  const uint32_t old = t->worker.state;
  if (old == state) return;
  const int32_t delta = static_cast<int32_t>(CountsAsWorking(state)) - static_cast<int32_t>(CountsAsWorking(old));
  // The counter first when a thread starts working (a sample in between sees one more
  // worker working, never a WORKING thread that the counter misses: working > 0 on
  // every WORKING sample), last when it stops.
  if (delta > 0) AddWorking(delta);
  t->worker.state = state;
  if (delta < 0) AddWorking(delta);
}

TaskRecord* NewTaskRecord() {
  ThreadSlot* slot = Slot();
  if (slot == nullptr) return nullptr;
  if (slot->tasks.length == 0 && !Refill(&slot->tasks, &g_task_reserve, sizeof(TaskRecord))) return nullptr;
  ++slot->tasks_taken;
  return new (Pop(&slot->tasks)) TaskRecord();
}

void FreeTaskRecord(TaskRecord* record) {
  if (record == nullptr) return;
  ThreadSlot* slot = Slot();
  if (slot == nullptr) return;  // out of memory: the record is lost, not reused
  ++slot->tasks_released;
  Push(&slot->tasks, record);
  if (slot->tasks.length > 2 * kPoolBatch) HandBack(&slot->tasks, &g_task_reserve, /*all=*/false);
}

RegionRecord* NewRegionRecord() {
  ThreadSlot* slot = Slot();
  if (slot == nullptr) return nullptr;
  if (slot->regions.length == 0 && !Refill(&slot->regions, &g_region_reserve, sizeof(RegionRecord))) {
    return nullptr;
  }
  ++slot->regions_taken;
  return new (Pop(&slot->regions)) RegionRecord();
}

void FreeRegionRecord(RegionRecord* record) {
  if (record == nullptr) return;
  ThreadSlot* slot = Slot();
  if (slot == nullptr) return;
  ++slot->regions_released;
  Push(&slot->regions, record);
  if (slot->regions.length > 2 * kPoolBatch) HandBack(&slot->regions, &g_region_reserve, /*all=*/false);
}

int64_t LiveTaskRecords() {
  int64_t live = 0;
  for (ThreadSlot* s = __atomic_load_n(&g_threads, __ATOMIC_ACQUIRE); s != nullptr; s = s->next) {
    live += s->tasks_taken - s->tasks_released;
  }
  return live;
}

int64_t LiveRegionRecords() {
  int64_t live = 0;
  for (ThreadSlot* s = __atomic_load_n(&g_threads, __ATOMIC_ACQUIRE); s != nullptr; s = s->next) {
    live += s->regions_taken - s->regions_released;
  }
  return live;
}

}  // namespace cilkprof::agent::ompt
