// Sets the runtime's environment for a test executable before main (and so before
// the runtime reads it): CILK_TEST_ENVIRONMENT is "NAME=VALUE,NAME=VALUE". Values
// already in the environment win, so a developer can override them.
#include <cstdlib>
#include <string>

namespace {

struct TestEnvironment {
  TestEnvironment() {
    const std::string spec = CILK_TEST_ENVIRONMENT;
    std::size_t start = 0;
    while (start < spec.size()) {
      std::size_t end = spec.find(',', start);
      if (end == std::string::npos) end = spec.size();
      const std::string item = spec.substr(start, end - start);
      if (const std::size_t eq = item.find('='); eq != std::string::npos) {
        setenv(item.substr(0, eq).c_str(), item.substr(eq + 1).c_str(), /*overwrite=*/0);
      }
      start = end + 1;
    }
  }
};

const TestEnvironment kEnvironment;

}  // namespace
