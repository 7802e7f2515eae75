// The crash path's last flush (crash_flush.h). Everything below runs in a signal
// handler: no allocation, no std::string or vector that grows, no lock but the
// agent's own flush lock taken with trylock, system calls only from the
// async-signal-safe list. Containers are only read (their storage was allocated
// earlier, in ordinary context, under the flush lock this code holds).
#include "crash_flush.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "agent_state.h"
#include "real_functions.h"
#include "stream_format.h"

namespace cilkprof::agent {
namespace {

constexpr size_t kBufferBytes = 256u << 10;  // one frame at most; bigger data is split
constexpr int kLockWaitMs = 5000;            // the flusher holds it for ms (a slow disk: longer)
constexpr uint64_t kSendBudgetMs = 3000;     // for the socket, before spilling instead
constexpr int kOtherCrashWaitMs = 10000;     // a second crashing thread waits this long

char* g_buffer = nullptr;
pid_t g_crash_owner = 0;  // the thread doing the crash flush (atomic accesses)
int g_crash_done = 0;     // atomic accesses

uint64_t ClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void SleepOneMs() { poll(nullptr, 0, 1); }

// A NUL-terminated text built in a fixed buffer (paths, the Goodbye's reason). Small:
// this code may run on a program's alternate signal stack.
template <size_t kSize>
class Text {
 public:
  Text& operator<<(const char* s) {
    while (s != nullptr && *s != '\0' && used_ + 1 < kSize) buf_[used_++] = *s++;
    buf_[used_] = '\0';
    return *this;
  }
  Text& operator<<(uint64_t value) {
    char digits[24];
    size_t n = 0;
    do {
      digits[n++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value != 0);
    while (n > 0 && used_ + 1 < kSize) buf_[used_++] = digits[--n];
    buf_[used_] = '\0';
    return *this;
  }
  const char* c_str() const { return buf_; }
  size_t size() const { return used_; }

 private:
  char buf_[kSize] = {};
  size_t used_ = 0;
};

// "signal 11 (SIGSEGV)"
template <size_t kSize>
void SignalLabel(int signo, Text<kSize>* out) {
  *out << "signal " << static_cast<uint64_t>(signo);
  if (const char* abbrev = sigabbrev_np(signo)) *out << " (SIG" << abbrev << ")";
}

// One line on stderr, written piece by piece (no buffer as long as a path).
class StderrLine {
 public:
  StderrLine() { Write("cilkprof: "); }
  StderrLine& operator<<(const char* s) {
    Write(s);
    return *this;
  }
  StderrLine& operator<<(uint64_t value) {
    Text<24> digits;
    digits << value;
    Write(digits.c_str());
    return *this;
  }
  ~StderrLine() { Write("\n"); }

 private:
  static void Write(const char* s) {
    size_t left = strlen(s);
    while (left > 0) {
      const ssize_t n = write(STDERR_FILENO, s, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      s += n;
      left -= static_cast<size_t>(n);
    }
  }
};

// Delta and Goodbye frames encoded by hand into g_buffer and written through the
// transport's crash functions. Nested messages get their length as a 5-byte varint
// (padded with continuation bits), written when the message closes: the values are
// read once, while other threads may still be changing them, so the sizes cannot be
// known in advance. Protocol buffers accept such lengths. When the buffer is nearly
// full, the open thread and Delta are closed, the frame goes out, and both are
// reopened in a new frame (a thread may appear in any number of Deltas).
class CrashFrames {
 public:
  CrashFrames(Transport* transport, uint64_t deadline_ms)
      : transport_(transport), deadline_ms_(deadline_ms) {
    flush_unix_ns_ = ClockNs(CLOCK_REALTIME);
    process_cpu_ns_ = ClockNs(CLOCK_PROCESS_CPUTIME_ID);
  }
  bool failed() const { return failed_; }

  void Module(uint32_t id, const std::string& path, const std::string& build_id, uint64_t load_bias,
              uint64_t start, uint64_t end, bool unloaded) {
    if (!Room(64 + path.size() + build_id.size())) return;
    OpenDelta();
    const size_t slot = Open(1);
    Varint(1, id);
    Bytes(2, path.data(), path.size());
    Bytes(3, build_id.data(), build_id.size());
    Varint(4, load_bias);
    Varint(5, start);
    Varint(6, end);
    Varint(7, unloaded ? 1 : 0);
    Close(slot);
  }

  void BeginThread(uint32_t tid, uint32_t thread_index) {
    tid_ = tid;
    thread_index_ = thread_index;
    if (Room(64)) OpenThread();
  }
  void Name(const char* name, size_t size) {
    if (Room(32 + size)) Bytes(2, name, size);
  }
  void Node(uint32_t id, uint32_t parent, uint32_t kind, uint32_t module_id, uint64_t offset,
            uint32_t edge) {
    if (!Room(64)) return;
    const size_t slot = Open(3);
    Varint(1, id);
    Varint(2, parent);
    Varint(3, kind);
    Varint(4, module_id);
    Varint(5, offset);
    Varint(6, edge);
    Close(slot);
  }
  void Metrics(uint32_t node, const uint64_t* values) {
    if (!Room(32 + kMetricCount * 8)) return;
    const size_t slot = Open(4);
    Varint(1, node);
    Tag(2, 2);  // packed doubles
    RawVarint(kMetricCount * 8);
    for (uint32_t m = 0; m < kMetricCount; ++m) {
      const double v = static_cast<double>(values[m]);
      uint64_t bits;
      memcpy(&bits, &v, sizeof bits);
      for (int b = 0; b < 8; ++b) Byte(static_cast<char>((bits >> (8 * b)) & 0xff));
    }
    Close(slot);
  }
  void Counters(const ThreadCountersMsg& c) {
    if (!Room(280)) return;
    const size_t slot = Open(5);
    const uint64_t fields[] = {c.samples,          c.partial_unwinds, c.dropped_reentrant,
                               c.dropped_no_memory, c.cpu_ns,          c.idle_samples,
                               c.idle_ns,          c.overhead_samples, c.unattributed_overhead,
                               c.probe_samples,    c.probe_partial,   c.unsampled_ns,
                               c.signal_blocked,   c.deep_stacks,     c.deep_stack_frames_elided,
                               c.deepest_stack,    c.lock_acquisitions, c.lock_contended,
                               c.lock_wait_ns,     c.lock_blame_ns,   c.lock_unblamed_ns,
                               c.lock_wait_open_ns};
    for (uint32_t f = 0; f < sizeof fields / sizeof fields[0]; ++f) Varint(f + 1, fields[f]);
    Close(slot);
  }
  void Exited() {
    if (Room(8)) Varint(6, 1);
  }
  void EndThread() {
    if (thread_open_) Close(thread_slot_);
    thread_open_ = false;
  }

  // Sends what is open.
  bool Flush() {
    if (failed_) return false;
    EndThread();
    if (!delta_open_) return true;
    Varint(3, flush_unix_ns_);
    Varint(4, process_cpu_ns_);
    Close(delta_slot_);
    delta_open_ = false;
    return Send();
  }

  bool Goodbye(const char* reason) {
    if (!Flush()) return false;
    Start();
    const size_t slot = Open(3);
    Varint(1, ClockNs(CLOCK_REALTIME));
    Bytes(2, reason, strlen(reason));
    Close(slot);
    return Send();
  }

 private:
  // Room for `need` more bytes in this frame, splitting it if necessary.
  bool Room(size_t need) {
    if (failed_) return false;
    constexpr size_t kReserve = 64;  // the Delta's closing fields
    if (len_ + need + kReserve <= kBufferBytes) return true;
    const bool thread_was_open = thread_open_;
    if (!Flush()) return false;
    if (thread_was_open) OpenThread();
    return len_ + need + kReserve <= kBufferBytes;
  }
  void Start() { len_ = kSealedHeaderBytes; }
  void OpenDelta() {
    if (delta_open_) return;
    Start();
    delta_slot_ = Open(2);  // AgentMessage.delta
    delta_open_ = true;
  }
  void OpenThread() {
    OpenDelta();
    thread_slot_ = Open(2);  // Delta.threads
    thread_open_ = true;
    Varint(1, tid_);
    Varint(7, thread_index_);
  }
  bool Send() {
    SealFrameHeader(g_buffer, static_cast<uint32_t>(len_ - kSealedHeaderBytes));
    if (!transport_->CrashWrite(g_buffer, len_, deadline_ms_)) failed_ = true;
    len_ = 0;
    return !failed_;
  }

  void Byte(char c) { g_buffer[len_++] = c; }
  void RawVarint(uint64_t v) {
    while (v >= 0x80) {
      Byte(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    Byte(static_cast<char>(v));
  }
  void Tag(uint32_t field, uint32_t type) { RawVarint(uint64_t{field} << 3 | type); }
  void Varint(uint32_t field, uint64_t v) {
    if (v == 0) return;
    Tag(field, 0);
    RawVarint(v);
  }
  void Bytes(uint32_t field, const char* p, size_t n) {
    if (n == 0) return;
    Tag(field, 2);
    RawVarint(n);
    memcpy(g_buffer + len_, p, n);
    len_ += n;
  }
  // A nested message: its tag, then 5 bytes for its length, filled in by Close.
  size_t Open(uint32_t field) {
    Tag(field, 2);
    const size_t slot = len_;
    len_ += 5;
    return slot;
  }
  void Close(size_t slot) {
    const uint64_t n = len_ - slot - 5;
    for (int i = 0; i < 4; ++i) g_buffer[slot + i] = static_cast<char>(((n >> (7 * i)) & 0x7f) | 0x80);
    g_buffer[slot + 4] = static_cast<char>((n >> 28) & 0x7f);
  }

  Transport* transport_;
  uint64_t deadline_ms_;
  uint64_t flush_unix_ns_ = 0, process_cpu_ns_ = 0;
  size_t len_ = 0;
  bool failed_ = false;
  bool delta_open_ = false, thread_open_ = false;
  size_t delta_slot_ = 0, thread_slot_ = 0;
  uint32_t tid_ = 0, thread_index_ = 0;
};

uint64_t Minus(uint64_t live, uint64_t reported) { return live > reported ? live - reported : 0; }

ThreadCountersMsg CounterIncrements(const SampleCounters& live, const SampleCounters* reported) {
  const SampleCounters zero{};
  const SampleCounters& r = reported != nullptr ? *reported : zero;
  ThreadCountersMsg c;
  c.samples = Minus(CounterRead(&live.samples), r.samples);
  c.partial_unwinds = Minus(CounterRead(&live.partial_unwinds), r.partial_unwinds);
  c.dropped_reentrant = Minus(CounterRead(&live.dropped_reentrant), r.dropped_reentrant);
  c.dropped_no_memory = Minus(CounterRead(&live.dropped_no_memory), r.dropped_no_memory);
  c.cpu_ns = Minus(CounterRead(&live.cpu_ns), r.cpu_ns);
  c.idle_samples = Minus(CounterRead(&live.idle_samples), r.idle_samples);
  c.idle_ns = Minus(CounterRead(&live.idle_ns), r.idle_ns);
  c.overhead_samples = Minus(CounterRead(&live.overhead_samples), r.overhead_samples);
  c.unattributed_overhead = Minus(CounterRead(&live.unattributed_overhead), r.unattributed_overhead);
  c.probe_samples = Minus(CounterRead(&live.probe_samples), r.probe_samples);
  c.probe_partial = Minus(CounterRead(&live.probe_partial), r.probe_partial);
  c.unsampled_ns = Minus(CounterRead(&live.unsampled_ns), r.unsampled_ns);
  c.signal_blocked = Minus(CounterRead(&live.signal_blocked), r.signal_blocked);
  c.deep_stacks = Minus(CounterRead(&live.deep_stacks), r.deep_stacks);
  c.deep_stack_frames_elided = Minus(CounterRead(&live.deep_stack_frames_elided), r.deep_stack_frames_elided);
  c.deepest_stack = Minus(CounterRead(&live.deepest_stack), r.deepest_stack);
  c.lock_acquisitions = Minus(CounterRead(&live.lock_acquisitions), r.lock_acquisitions);
  c.lock_contended = Minus(CounterRead(&live.lock_contended), r.lock_contended);
  c.lock_wait_ns = Minus(CounterRead(&live.lock_wait_ns), r.lock_wait_ns);
  c.lock_blame_ns = Minus(CounterRead(&live.lock_blame_ns), r.lock_blame_ns);
  c.lock_unblamed_ns = Minus(CounterRead(&live.lock_unblamed_ns), r.lock_unblamed_ns);
  c.lock_wait_open_ns = Minus(CounterRead(&live.lock_wait_open_ns), r.lock_wait_open_ns);
  return c;
}

// The thread's name, for a thread never announced: /proc/self/task/<tid>/comm.
void ThreadName(const ThreadRecord& t, CrashFrames* out) {
  char name[17] = {};
  size_t n = 0;
  if (__atomic_load_n(&t.exited, __ATOMIC_ACQUIRE)) {
    n = strnlen(t.exit_name, sizeof t.exit_name);
    memcpy(name, t.exit_name, n);
  } else {
    Text<64> path;
    path << "/proc/self/task/" << static_cast<uint64_t>(t.tid) << "/comm";
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      const ssize_t got = read(fd, name, sizeof name - 1);
      close(fd);
      n = got > 0 ? static_cast<size_t>(got) : 0;
      while (n > 0 && (name[n - 1] == '\n' || name[n - 1] == '\0')) --n;
    }
  }
  if (n > 0) out->Name(name, n);
}

// Every live thread: since its last report (`full` false), or all of it (`full`).
void EncodeLiveThreads(bool full, CrashFrames* out) {
  AgentState& s = *g_state;
  for (ThreadRecord* t = __atomic_load_n(&s.threads, __ATOMIC_ACQUIRE); t != nullptr; t = t->next) {
    const bool exited = __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE);
    const ThreadCct& cct = t->cct;
    const uint32_t count = cct.published_count();
    out->BeginThread(static_cast<uint32_t>(t->tid), t->thread_index);
    if (full || !t->announced) ThreadName(*t, out);
    for (uint32_t id = full ? 1 : t->builder.nodes_sent(); id < count; ++id) {
      const CctNode& n = cct.node(id);
      uint32_t module_id = 0;
      uint64_t offset = n.pc;
      if (n.kind == NodeKind::kPc || n.kind == NodeKind::kLock) {
        const ModuleInfo* m = n.kind == NodeKind::kPc ? s.modules.Find(n.pc) : s.modules.FindData(n.pc);
        if (m != nullptr) {
          module_id = m->id;
          offset = n.pc - m->load_bias;
        }
      } else {
        offset = 0;
      }
      out->Node(id, n.parent, static_cast<uint32_t>(n.kind), module_id, offset, n.edge);
    }
    for (uint32_t id = 0; id < count; ++id) {
      uint64_t values[kMetricCount];
      bool any = false;
      for (uint32_t m = 0; m < kMetricCount; ++m) {
        const uint64_t live = cct.metric(id, static_cast<MetricId>(m));
        values[m] = full ? live : Minus(live, t->builder.reported_metric(id, static_cast<MetricId>(m)));
        any = any || values[m] != 0;
      }
      if (any) out->Metrics(id, values);
    }
    out->Counters(CounterIncrements(t->counters, full ? nullptr : &t->builder.reported_counters()));
    if (exited) out->Exited();
    out->EndThread();
  }
}

// What ended threads recorded (retired_threads.h), for a whole-profile spill.
void EncodeRetiredThreads(CrashFrames* out) {
  const RetiredThreads& retired = g_state->retired;
  if (retired.empty()) return;
  const RetiredThreads::Thread& carrier = retired.threads().front();
  out->BeginThread(carrier.tid, carrier.thread_index);
  const auto& nodes = retired.nodes();
  for (size_t id = 1; id < nodes.size(); ++id) {
    const RetiredThreads::Node& n = nodes[id];
    out->Node(static_cast<uint32_t>(id), n.parent, static_cast<uint32_t>(n.kind), n.module_id, n.offset,
              n.edge);
  }
  for (size_t id = 0; id < nodes.size(); ++id) {
    bool any = false;
    for (uint64_t v : nodes[id].metrics) any = any || v != 0;
    if (any) out->Metrics(static_cast<uint32_t>(id), nodes[id].metrics);
  }
  out->EndThread();
  for (const RetiredThreads::Thread& t : retired.threads()) {
    out->BeginThread(t.tid, t.thread_index);
    out->Name(t.name.data(), t.name.size());
    out->Counters(CounterIncrements(t.counters, nullptr));
    out->Exited();
    out->EndThread();
  }
}

// The modules the nodes below refer to: those not announced yet, or (`full`) all of
// them, with the modules only ended threads still refer to.
void EncodeModules(bool full, CrashFrames* out) {
  AgentState& s = *g_state;
  for (const ModuleInfo& m : s.modules.modules()) {
    if (full || !m.announced) out->Module(m.id, m.path, m.build_id, m.load_bias, m.start, m.end, m.unloaded);
  }
  if (!full) return;
  for (const LoadModuleMsg& m : s.retired.modules()) {
    bool in_table = false;
    for (const ModuleInfo& known : s.modules.modules()) in_table = in_table || known.id == m.id;
    if (!in_table) out->Module(m.id, m.path, m.build_id, m.load_bias, m.start, m.end, m.unloaded);
  }
}

// Whole-profile spill: the Hello (CrashStartSpill wrote it), every module, every
// thread from zero, the ended threads, the Goodbye.
bool WriteWholeProfile(Transport* transport, const char* reason, uint64_t deadline_ms) {
  CrashFrames frames(transport, deadline_ms);
  EncodeModules(/*full=*/true, &frames);
  EncodeLiveThreads(/*full=*/true, &frames);
  EncodeRetiredThreads(&frames);
  return frames.Goodbye(reason);
}

// True when the calling thread holds the mutex (glibc records the owner of every
// mutex type): waiting for it would be waiting for ourselves.
bool HeldByMe(const pthread_mutex_t& mu, pid_t tid) { return mu.__data.__owner == tid; }

bool LockFlushBounded(AgentState& s, pid_t tid) {
  if (HeldByMe(s.flush_mu, tid)) return false;
  for (int waited = 0; waited < kLockWaitMs; ++waited) {
    if (pthread_mutex_trylock(&s.flush_mu) == 0) return true;
    SleepOneMs();
  }
  return false;
}

void Flush(int signo, pid_t tid) {
  AgentState& s = *g_state;
  Text<64> reason;
  SignalLabel(signo, &reason);
  if (!LockFlushBounded(s, tid)) {
    StderrLine() << "the program is ending with " << reason.c_str()
                 << "; the agent could not make its last flush (its lock stayed taken), so the "
                    "profile ends at its last periodic flush";
    return;
  }
  // Keep the lock: the process is ending, and nothing may write to the connection
  // after the Goodbye (an exit() on another thread now waits for the end).
  __atomic_store_n(&s.shut_down, true, __ATOMIC_RELEASE);
  Transport& transport = s.transport;
  const uint64_t deadline_ms = ClockNs(CLOCK_MONOTONIC) / 1000000 + kSendBudgetMs;
  Transport::Route route = transport.CrashRoute();
  if (!transport.hello_queued()) return;  // nothing was ever sent: too early to say anything
  if (route == Transport::Route::kSocket && !transport.CrashSendQueued(deadline_ms)) {
    route = Transport::Route::kNowhere;
  }
  if (route != Transport::Route::kNowhere) {
    CrashFrames frames(&transport, deadline_ms);
    EncodeModules(/*full=*/false, &frames);
    EncodeLiveThreads(/*full=*/false, &frames);
    if (frames.Goodbye(reason.c_str())) return;
    if (route == Transport::Route::kSpill) return;  // the file is as complete as it can be
  }
  // The aggregator is gone (or never was ours): everything to a new spill file.
  const bool spilled =
      transport.CrashStartSpill() && WriteWholeProfile(&transport, reason.c_str(), deadline_ms);
  StderrLine line;
  line << "the program is ending with " << reason.c_str() << " and the aggregator at "
       << transport.address() << " cannot take its last data; ";
  if (spilled) {
    line << "wrote the whole profile of process " << static_cast<uint64_t>(s.pid) << " to "
         << transport.crash_spill_path() << " (convert it with: cilkprof import "
         << transport.crash_spill_path() << ")";
  } else {
    line << "could not write a spill file in " << s.config.spill_dir.c_str()
         << " either: the profile ends at the agent's last flush. Set CILKPROF_SPILL_DIR to a "
            "writable directory.";
  }
}

}  // namespace

bool PrepareCrashFlush() {
  if (g_buffer != nullptr) return true;
  void* p = mmap(nullptr, kBufferBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  // Touch every page now: no page fault (and no chance of running out of memory for
  // it) in the signal handler.
  memset(p, 0, kBufferBytes);
  g_buffer = static_cast<char*>(p);
  return true;
}

void CrashFlush(int signo) {
  AgentState* s = g_state;
  if (s == nullptr || g_buffer == nullptr || getpid() != s->pid) return;
  const pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  pid_t expected = 0;
  if (!__atomic_compare_exchange_n(&g_crash_owner, &expected, tid, false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    if (expected == tid) return;  // a fault inside the flush itself: give up, die
    // Another thread is flushing for its own fatal signal (or the same one, sent to
    // the process again: Ctrl-C from the terminal and from `cilkprof run`); this one
    // waits, so that it does not end the process in the middle of that flush.
    for (int waited = 0; waited < kOtherCrashWaitMs; ++waited) {
      if (__atomic_load_n(&g_crash_done, __ATOMIC_ACQUIRE)) return;
      SleepOneMs();
    }
    return;
  }
  if (__atomic_load_n(&s->shut_down, __ATOMIC_ACQUIRE)) {  // said Goodbye already
    __atomic_store_n(&g_crash_done, 1, __ATOMIC_RELEASE);
    return;
  }
  __atomic_store_n(&g_sampling, 0, __ATOMIC_RELEASE);  // handlers elsewhere stop writing
  // A second signal on this thread (Ctrl-C reaches the program from the terminal and
  // again from `cilkprof run`) must not end the process in the middle of the flush:
  // every signal but the faults waits until the handler returns, when sigreturn
  // restores the interrupted mask (the process then dies of the first signal). Faults
  // stay open: a fault inside the flush ends it at once.
  sigset_t later;
  sigfillset(&later);
  for (int fault : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP}) sigdelset(&later, fault);
  real::pthread_sigmask()(SIG_BLOCK, &later, nullptr);
  if (!(s->flusher_running && pthread_equal(pthread_self(), s->flusher))) Flush(signo, tid);
  __atomic_store_n(&g_crash_done, 1, __ATOMIC_RELEASE);
}

}  // namespace cilkprof::agent
