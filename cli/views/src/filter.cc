#include "cilkprof/views/filter.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

namespace cilkprof::views {
namespace {

bool IsFunctionKind(RowKind kind) {
  return kind == RowKind::kContext || kind == RowKind::kFunction || kind == RowKind::kPartialUnwind ||
         kind == RowKind::kElidedFrames;
}

std::string Lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Drops a return type in front of the name ("void ns::f<int>" -> "ns::f<int>"): the
// demangler spells it for function templates. A space outside template arguments and
// parentheses separates it; "operator new" and the like keep theirs.
std::string WithoutReturnType(const std::string& name) {
  int depth = 0;
  size_t cut = std::string::npos;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<' || c == '(' || c == '{' || c == '[') ++depth;
    if ((c == '>' || c == ')' || c == '}' || c == ']') && depth > 0) --depth;
    // "f() const::{lambda()}": a qualifier of an enclosing function, not a return type.
    const bool after_parameters = i > 0 && name[i - 1] == ')';
    if (c == ' ' && depth == 0 && !after_parameters && !EndsWith(name.substr(0, i), "operator")) cut = i;
  }
  return cut == std::string::npos ? name : name.substr(cut + 1);
}

}  // namespace

std::string WithoutParameters(const std::string& function) {
  std::string name = function;
  // Trailing qualifiers of member functions.
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (const char* suffix : {" const", " volatile", " &&", " &", "&&", "&"}) {
      const std::string s = suffix;
      if (name.size() > s.size() && EndsWith(name, s)) {
        name.resize(name.size() - s.size());
        stripped = true;
      }
    }
  }
  if (name.empty() || name.back() != ')') return WithoutReturnType(name);
  int depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    if (name[i] == ')') ++depth;
    if (name[i] == '(' && --depth == 0) {
      if (i == 0) return function;
      // "X::operator()" without a parameter list: the parentheses are the name's own.
      if (i + 2 == name.size() && EndsWith(name.substr(0, i), "operator")) return WithoutReturnType(name);
      return WithoutReturnType(name.substr(0, i));
    }
  }
  return function;
}

std::string UnqualifiedName(const std::string& function) {
  const std::string name = WithoutParameters(function);
  // The last "::" outside template arguments and parentheses separates the
  // qualifiers: "ns::C<a::b>::f" -> "f", "(anonymous namespace)::fib" -> "fib".
  int depth = 0;
  for (size_t i = name.size(); i-- > 1;) {
    const char c = name[i];
    if (c == '>' || c == ')') ++depth;
    if ((c == '<' || c == '(') && depth > 0) --depth;
    if (depth == 0 && c == ':' && name[i - 1] == ':') return name.substr(i + 1);
  }
  return name;
}

Result<std::vector<LabelId>> MatchFunction(const LabelTable& labels, std::span<const LabelId> candidates,
                                           const std::string& function) {
  std::vector<LabelId> functions;
  for (LabelId l : candidates) {
    if (IsFunctionKind(labels[l].kind)) functions.push_back(l);
  }
  std::vector<LabelId> matches;
  for (LabelId l : functions) {
    if (labels.Name(l) == function) matches.push_back(l);
  }
  // Shorter spellings, most specific first: without the parameter list ("ns::f" for
  // "ns::f(int)"), then without the qualifiers too ("fib" for
  // "(anonymous namespace)::fib(int)"). A short name standing for several functions
  // is an error that lists them.
  for (auto shorten : {&WithoutParameters, &UnqualifiedName}) {
    if (!matches.empty()) break;
    std::set<std::string> distinct;
    for (LabelId l : functions) {
      if (shorten(labels.Name(l)) == function) {
        matches.push_back(l);
        distinct.insert(labels.Name(l));
      }
    }
    if (distinct.size() > 1) {
      std::string list;
      for (const auto& name : distinct) list += "\n  " + name;
      return Status::Error("--focus '" + function + "' matches several functions; give one full name:" + list);
    }
  }
  if (!matches.empty()) return matches;
  std::set<std::string> similar;
  const std::string needle = Lowercase(function);
  for (LabelId l : functions) {
    if (Lowercase(labels.Name(l)).find(needle) != std::string::npos) similar.insert(labels.Name(l));
  }
  std::string message = "--focus: no function named '" + function + "' in this profile";
  if (!similar.empty()) {
    message += "; similar names:";
    size_t shown = 0;
    for (const auto& name : similar) {
      if (shown++ == 8) {
        message += "\n  ...";
        break;
      }
      message += "\n  " + name;
    }
  } else {
    message += " (see the names in 'cilkprof view bottom-up')";
  }
  return Status::Error(message);
}

Result<RowTree> FocusOn(const RowTree& tree, const std::string& function) {
  // The labels the tree's rows use.
  std::vector<bool> used(tree.labels().size(), false);
  for (uint32_t n = 1; n < tree.size(); ++n) used[tree.label(n)] = true;
  std::vector<LabelId> candidates;
  for (LabelId l = 0; l < used.size(); ++l) {
    if (used[l]) candidates.push_back(l);
  }
  auto matched = MatchFunction(tree.labels(), candidates, function);
  if (!matched.ok()) return matched.status();
  std::vector<bool> wanted(tree.labels().size(), false);
  for (LabelId l : *matched) wanted[l] = true;
  // The outermost rows of those functions: their subtrees are not searched further,
  // so a recursive function contributes its outermost contexts only.
  std::vector<uint32_t> outermost;
  for (uint32_t n = 1; n < tree.size();) {
    if (wanted[tree.label(n)]) {
      outermost.push_back(n);
      n = tree.end(n);
    } else {
      ++n;
    }
  }
  RowTreeBuilder builder(tree.context(), tree.label(outermost.front()), RowTreeBuilder::Inclusive::kAsAdded);
  builder.SetInlined(0, tree.inlined(outermost.front()));
  std::vector<uint32_t> mapped;  // row of the subtree -> row of the focused tree
  for (uint32_t m : outermost) {
    builder.AddInclusive(0, tree.inclusive(m));
    builder.AddExclusive(0, tree.exclusive(m));
    builder.AddSites(0, tree.sites(m));  // a site reached through several contexts is still one site
    mapped.assign(tree.end(m) - m, 0);
    for (uint32_t d = m + 1; d < tree.end(m); ++d) {
      const uint32_t row = builder.FindOrAdd(mapped[tree.parent(d) - m], tree.label(d), tree.edge(d), tree.inlined(d));
      mapped[d - m] = row;
      builder.AddInclusive(row, tree.inclusive(d));
      builder.AddExclusive(row, tree.exclusive(d));
      builder.AddSites(row, tree.sites(d));
    }
  }
  return builder.Finish();
}

}  // namespace cilkprof::views
