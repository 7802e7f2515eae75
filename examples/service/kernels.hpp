// The Cilk-parallel work behind each request of the example service. Each kernel is
// its own noinline function family, so a profile of the service shows which request
// kind its time goes to: fib_parallel for `fib`, sort_parallel/merge_parallel for
// `sort`, queens_parallel/queens_serial for `nqueens`. Change the load generator's
// --mix and the hot path moves.
#pragma once

#include <cstdint>
#include <string>

#include "service/requests.hpp"

namespace cilk_service {

// Runs a compute request (fib, sort, nqueens) inside the Cilk runtime and returns
// its reply line without the newline ("ok ..." or "error ...").
std::string compute(const Request& request);

}  // namespace cilk_service
