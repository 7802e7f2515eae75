// `--format pprof`: pprof's profile.proto (proto/pprof/profile.proto), gzipped, for
// `go tool pprof` and the continuous-profiling backends that ingest pprof (Pyroscope,
// Parca, Grafana). docs/USER_GUIDE.md, "Export", says what a user sees.
//
// The mapping from a Cilkprof profile:
//   sample types  one per metric of the profile, in its order, with pprof's unit names
//                 ("ns" -> "nanoseconds"); values rounded to integers. The default
//                 sample type is --metric, else work.
//   samples       one per profile node with a non-zero exclusive value: its own
//                 values and its path, the leaf first. The profile's root has no
//                 frame: its own values (samples no context was recorded for) are a
//                 sample at a "<program root>" frame, so that the totals agree.
//   locations     one per code address the samples pass through (the address is the
//                 module's ELF virtual address, as the profile keeps it), with its
//                 source frames as Lines, innermost first (inlined functions before
//                 the function they were inlined into).
//   spawn edges   a "[spawn]" frame between a spawned function and the function that
//                 spawned it: it shows in -traces, -peek, flame graphs and the call
//                 graph, and never has flat time of its own, so -top is unchanged.
//   task edges    the same with a "[task]" frame between an OpenMP task's function and
//                 the function that created the task (wire EDGE_TASK, issue 17).
//   markers       "<partial unwind>" and "[deep stack: frames elided]" are frames,
//                 named as the views name them.
//   locks         a lock node (lock_wait at a waiter, lock_blame at a releaser) is a
//                 sample of its own at the lock call's path, labelled lock=NAME: its
//                 time stays with the function that called the lock, as in the flat
//                 view, and -tagfocus lock=NAME selects it.
//   mappings      one per module with a location, main binary first: path, build ID
//                 in hexadecimal; the profile keeps no load addresses, so the range is
//                 the lowest to one past the highest address seen, file_offset 0. All
//                 has_* flags are set: readers take our symbols and never look for the
//                 binaries.
// Functions have their demangled name, file and first line; system_name stays empty
// (the profile keeps no mangled names).
//
// Streaming: samples are serialized one at a time into the gzip stream as the nodes
// are visited; only the tables (locations, functions, mappings, strings) are held, so
// memory grows with the profile's distinct addresses, not with its paths' lengths.
// Protocol Buffers merge repeated fields wherever they occur, so the tables are
// written after the samples.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>

#include "cilkprof/views/labels.h"
#include "cilkprof/views/locks.h"
#include "cilkprof/views/metric_columns.h"
#include "export/exporters.h"
#include "pprof/profile.pb.h"

namespace cilkprof::cli::exporters {
namespace {

namespace pb = perftools::profiles;


std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  return hex;
}

// pprof's unit names for Cilkprof's: pprof scales "nanoseconds" to ms/s in its
// output; "count" is its name for event counts.
std::string PprofUnit(const std::string& unit) {
  if (unit == "ns") return "nanoseconds";
  return unit.empty() ? "count" : unit;
}

// The string table and the location, function and mapping tables of the file.
class Tables {
 public:
  Tables(const profile::Profile& profile, pb::Profile& header)
      : profile_(profile), header_(header), location_ids_(static_cast<size_t>(profile.locations_size()), 0),
        module_range_(static_cast<size_t>(profile.modules_size())) {
    header_.add_string_table("");  // index 0 is always ""
  }

  int64_t String(std::string_view text) {
    auto found = strings_.find(std::string(text));
    if (found != strings_.end()) return found->second;
    const int64_t id = header_.string_table_size();
    header_.add_string_table(std::string(text));
    strings_.emplace(std::string(text), id);
    return id;
  }

  // The pprof location of profile location `index` (a code address), made once.
  uint64_t CodeLocation(uint32_t index) {
    if (index == 0 || index >= location_ids_.size()) return Pseudo(UnknownName(0));
    uint64_t& id = location_ids_[index];
    if (id != 0) return id;
    const profile::Location& source = profile_.locations(static_cast<int>(index));
    pb::Location* location = NewLocation(id);
    location->set_address(source.offset());
    const uint32_t module = source.module() < module_range_.size() ? source.module() : 0;
    if (module != 0) {
      location->set_mapping_id(module);  // a module index until Finish() numbers the mappings
      Range& range = module_range_[module];
      range.low = std::min(range.low, source.offset());
      range.high = std::max(range.high, source.offset() + 1);
    }
    // The profile's frames are outermost first; pprof's Lines innermost first.
    for (int f = source.frames_size(); f-- > 0;) {
      const profile::SourceFrame& frame = source.frames(f);
      pb::Line* line = location->add_line();
      if (frame.function().empty() || frame.function() == "??") {
        line->set_function_id(Function(UnknownName(module), "", 0));
        continue;
      }
      const std::string& file = frame.function_file().empty() ? frame.file() : frame.function_file();
      line->set_function_id(Function(frame.function(), file, frame.function_line()));
      line->set_line(frame.line());
    }
    if (source.frames_size() == 0) location->add_line()->set_function_id(Function(UnknownName(module), "", 0));
    return id;
  }

  // A location standing for something that is not code: "[spawn]", "[task]", the markers.
  uint64_t Pseudo(const std::string& name) {
    uint64_t& id = pseudo_ids_[name];
    if (id != 0) return id;
    pb::Location* location = NewLocation(id);
    location->add_line()->set_function_id(Function(name, "", 0));
    return id;
  }

  // Numbers the mappings (the main binary first) and sets the locations' mapping ids.
  void Finish() {
    std::vector<uint32_t> modules;
    for (uint32_t m = 1; m < module_range_.size(); ++m) {
      if (module_range_[m].high != 0) modules.push_back(m);
    }
    const std::string& executable = profile_.process().executable();
    std::stable_partition(modules.begin(), modules.end(),
                          [&](uint32_t m) { return profile_.modules(static_cast<int>(m)).path() == executable; });
    std::vector<uint64_t> mapping_id(module_range_.size(), 0);
    for (uint32_t m : modules) {
      const profile::Module& module = profile_.modules(static_cast<int>(m));
      pb::Mapping* mapping = header_.add_mapping();
      mapping->set_id(static_cast<uint64_t>(header_.mapping_size()));
      mapping->set_memory_start(module_range_[m].low);
      mapping->set_memory_limit(module_range_[m].high);
      mapping->set_filename(String(module.path()));
      if (!module.build_id().empty()) mapping->set_build_id(String(Hex(module.build_id())));
      mapping->set_has_functions(true);
      mapping->set_has_filenames(true);
      mapping->set_has_line_numbers(true);
      mapping->set_has_inline_frames(true);
      mapping_id[m] = mapping->id();
    }
    for (pb::Location& location : *header_.mutable_location()) {
      if (location.mapping_id() != 0) location.set_mapping_id(mapping_id[location.mapping_id()]);
    }
  }

 private:
  struct Range {
    uint64_t low = UINT64_MAX, high = 0;
  };
  struct FunctionKey {
    int64_t name, file, line;
    bool operator==(const FunctionKey&) const = default;
  };
  struct FunctionKeyHash {
    size_t operator()(const FunctionKey& k) const {
      return std::hash<int64_t>()(k.name) * 31 + std::hash<int64_t>()(k.file) * 7 + std::hash<int64_t>()(k.line);
    }
  };

  pb::Location* NewLocation(uint64_t& id) {
    pb::Location* location = header_.add_location();
    id = static_cast<uint64_t>(header_.location_size());
    location->set_id(id);
    return location;
  }

  uint64_t Function(const std::string& name, const std::string& file, uint32_t start_line) {
    const FunctionKey key{String(name), String(file), start_line};
    uint64_t& id = function_ids_[key];
    if (id != 0) return id;
    pb::Function* function = header_.add_function();
    id = static_cast<uint64_t>(header_.function_size());
    function->set_id(id);
    function->set_name(key.name);
    function->set_filename(key.file);
    function->set_start_line(start_line);
    return id;
  }

  // As the views label an unknown function: "?? [libm.so.6]".
  std::string UnknownName(uint32_t module) const {
    return module == 0 ? std::string("?? [unknown module]")
                       : "?? [" + Basename(profile_.modules(static_cast<int>(module)).path()) + "]";
  }

  const profile::Profile& profile_;
  pb::Profile& header_;
  std::unordered_map<std::string, int64_t> strings_;
  std::vector<uint64_t> location_ids_;  // by profile location; 0: not made yet
  std::unordered_map<std::string, uint64_t> pseudo_ids_;
  std::unordered_map<FunctionKey, uint64_t, FunctionKeyHash> function_ids_;
  std::vector<Range> module_range_;  // by profile module
};

// Serializes `message` as field `field` of the enclosing Profile.
void WriteField(int field, const google::protobuf::MessageLite& message, google::protobuf::io::CodedOutputStream& out) {
  const size_t size = message.ByteSizeLong();
  out.WriteTag(static_cast<uint32_t>(field << 3 | 2));  // wire type 2: length-delimited
  out.WriteVarint64(size);
  message.SerializeWithCachedSizes(&out);
}

// The profile's header fields: sample and period types, times, comments.
void DescribeProfile(const profile::Profile& profile, size_t default_metric, Tables& tables, pb::Profile& header) {
  for (const wire::MetricDescriptor& metric : profile.metrics()) {
    pb::ValueType* type = header.add_sample_type();
    type->set_type(tables.String(metric.name()));
    type->set_unit(tables.String(PprofUnit(metric.unit())));
  }
  header.set_default_sample_type(tables.String(profile.metrics(static_cast<int>(default_metric)).name()));
  const profile::ProcessInfo& process = profile.process();
  header.mutable_period_type()->set_type(tables.String(process.clock().empty() ? "cpu" : process.clock()));
  header.mutable_period_type()->set_unit(tables.String("nanoseconds"));
  header.set_period(static_cast<int64_t>(process.period_ns()));
  header.set_time_nanos(static_cast<int64_t>(process.start_unix_ns()));
  if (process.end_unix_ns() > process.start_unix_ns()) {
    header.set_duration_nanos(static_cast<int64_t>(process.end_unix_ns() - process.start_unix_ns()));
  }
  std::string command;
  for (const std::string& arg : process.argv()) command += (command.empty() ? "" : " ") + arg;
  if (command.empty()) command = process.executable();
  header.add_comment(tables.String("cilkprof profile of " + command + " (pid " + std::to_string(process.pid()) + ")"));
  header.add_comment(tables.String("[spawn] frames mark logical spawn edges: the function below was spawned by the one above"));
  for (const wire::MetricDescriptor& metric : profile.metrics()) {
    if (!metric.description().empty()) header.add_comment(tables.String(metric.name() + ": " + metric.description()));
  }
}

}  // namespace

Status WritePprof(const AnalysisInput& input, const ExportOptions& options, std::ostream& out) {
  const profile::Profile& profile = input.profile;
  const views::ProfileNodes& nodes = input.nodes;
  const size_t metric_count = static_cast<size_t>(profile.metrics_size());
  if (options.inverted) {
    return Status::Error("--inverted is for flame graphs (svg, folded); pprof readers show callers themselves "
                         "(go tool pprof -peek, or the flame graph's caller view in -http)");
  }
  const views::MetricColumns columns = views::MetricColumns::Of(profile);
  auto metric = views::ResolveMetric(columns, options.metric);
  if (!metric.ok()) return Status::Error(options.profile_path + ": " + metric.status().message());
  if (*metric >= metric_count) {
    return Status::Error(options.profile_path + ": '" + columns[*metric].name +
                         "' is derived from other metrics and is not a pprof sample type; give --metric one of "
                         "the profile's own metrics (work, idleness, overhead, samples, ...)");
  }

  pb::Profile header;
  Tables tables(profile, header);
  DescribeProfile(profile, *metric, tables, header);
  const int64_t lock_key = tables.String("lock");
  std::vector<int64_t> lock_names(static_cast<size_t>(profile.locations_size()), 0);

  google::protobuf::io::OstreamOutputStream raw(&out);
  google::protobuf::io::GzipOutputStream::Options gzip;
  gzip.format = google::protobuf::io::GzipOutputStream::GZIP;
  google::protobuf::io::GzipOutputStream compressed(&raw, gzip);
  {
    google::protobuf::io::CodedOutputStream coded(&compressed);
    std::vector<double> values(metric_count);
    pb::Sample sample;
    bool any_task = false;
    for (uint32_t n = 0; n < nodes.size(); ++n) {
      nodes.Exclusive(n, metric_count, values.data());
      if (std::all_of(values.begin(), values.end(), [](double v) { return v == 0; })) continue;
      sample.Clear();
      for (double v : values) sample.add_value(std::llround(v));
      uint32_t node = n;
      if (nodes.lock(node) && node != 0) {
        // The lock's time is the lock call's: the path starts at the node above.
        const uint32_t location = nodes.location(node);
        int64_t name = 0;
        if (location < lock_names.size()) {
          int64_t& cached = lock_names[location];
          if (cached == 0) cached = tables.String(views::LockIdentityOf(profile, location).name);
          name = cached;
        } else {
          name = tables.String(views::LockIdentityOf(profile, location).name);
        }
        pb::Label* label = sample.add_label();
        label->set_key(lock_key);
        label->set_str(name);
        node = nodes.parent(node);
      }
      if (node == 0) sample.add_location_id(tables.Pseudo(views::kProgramRootName));
      for (; node != 0; node = nodes.parent(node)) {
        if (nodes.partial_unwind(node)) {
          sample.add_location_id(tables.Pseudo(views::kPartialUnwindName));
        } else if (nodes.elided_frames(node)) {
          sample.add_location_id(tables.Pseudo(views::kElidedFramesName));
        } else if (!nodes.lock(node)) {
          sample.add_location_id(tables.CodeLocation(nodes.location(node)));
        }
        if (const char* marker = views::EdgeMarker(nodes.edge(node))) {
          sample.add_location_id(tables.Pseudo(marker));
          any_task |= nodes.edge(node) == views::Edge::kTask;
        }
      }
      WriteField(pb::Profile::kSampleFieldNumber, sample, coded);
    }
    if (any_task) {
      header.add_comment(
          tables.String("[task] frames mark OpenMP task edges: the function below runs a task the one above created"));
    }
    tables.Finish();
    header.SerializeToCodedStream(&coded);
    if (coded.HadError()) return Status::Error("cannot encode the pprof profile");
  }
  if (!compressed.Close()) {
    return Status::Error("cannot compress the pprof profile: " + std::string(compressed.ZlibErrorMessage()
                                                                                  ? compressed.ZlibErrorMessage()
                                                                                  : "zlib failed"));
  }
  return Status::Ok();
}

}  // namespace cilkprof::cli::exporters
