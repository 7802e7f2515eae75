// heat: the two-dimensional heat equation on an nx x ny grid, integrated for nt
// explicit time steps (five-point stencil, fixed boundary temperatures). Each
// time step updates all interior rows in a parallel_for; consecutive steps are
// separated by the implicit sync of parallel_for, exactly the structure of the
// Cilk-5 heat benchmark.
#include <cilk/cilk.hpp>

#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "common/example_support.hpp"

namespace ex = cilk_examples;

namespace {

const ex::Program kProgram{
    "heat",
    "Integrates the 2-D heat equation on an nx x ny grid for nt explicit time steps; each\n"
    "step updates the interior rows in a parallel_for. Verified bit for bit against a\n"
    "serial sweep with the same arithmetic.",
    {{"nx", "grid rows", 2048, 3, 32768}, {"ny", "grid columns", 2048, 3, 32768}, {"nt", "time steps", 200, 0, 1'000'000}}};

// Diffusion number dt * alpha / h^2; explicit scheme is stable up to 0.25.
constexpr double kDiffusion = 0.2;

// Computes row i of next from rows i-1, i, i+1 of current (interior columns only).
// Shared by the parallel and the serial sweep so both do identical arithmetic.
__attribute__((noinline)) void update_row(const double* above, const double* row, const double* below,
                                          double* out, long ny) {
  for (long j = 1; j < ny - 1; ++j) {
    out[j] = row[j] + kDiffusion * (above[j] + below[j] + row[j - 1] + row[j + 1] - 4.0 * row[j]);
  }
  out[0] = row[0];
  out[ny - 1] = row[ny - 1];
}

// Initial state: a hot top edge, a warm left edge, and a smooth bump inside.
std::vector<double> initial_grid(long nx, long ny) {
  std::vector<double> grid(static_cast<std::size_t>(nx * ny), 0.0);
  for (long i = 0; i < nx; ++i) {
    for (long j = 0; j < ny; ++j) {
      double v = std::sin(M_PI * i / (nx - 1)) * std::sin(M_PI * j / (ny - 1));
      if (i == 0) v = 1.0;
      if (j == 0) v = 0.5;
      grid[static_cast<std::size_t>(i * ny + j)] = v;
    }
  }
  return grid;
}

// Integrates nt steps in place on grid using scratch; returns the final grid's
// buffer (grid or scratch). Boundary rows are copied once into both buffers.
__attribute__((noinline)) std::vector<double>& heat_parallel(std::vector<double>& grid,
                                                            std::vector<double>& scratch, long nx,
                                                            long ny, long nt) {
  scratch = grid;
  std::vector<double>* current = &grid;
  std::vector<double>* next = &scratch;
  for (long t = 0; t < nt; ++t) {
    const double* cur = current->data();
    double* nxt = next->data();
    cilk::parallel_for(1L, nx - 1, [=](long i) {
      update_row(cur + (i - 1) * ny, cur + i * ny, cur + (i + 1) * ny, nxt + i * ny, ny);
    });
    std::swap(current, next);
  }
  return *current;
}

std::vector<double> heat_serial(std::vector<double> grid, long nx, long ny, long nt) {
  std::vector<double> next = grid;
  for (long t = 0; t < nt; ++t) {
    for (long i = 1; i < nx - 1; ++i) {
      update_row(&grid[(i - 1) * ny], &grid[i * ny], &grid[(i + 1) * ny], &next[i * ny], ny);
    }
    std::swap(grid, next);
  }
  return grid;
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const auto args = ex::parse_args(kProgram, argc, argv);
    const long nx = static_cast<long>(args[0]);
    const long ny = static_cast<long>(args[1]);
    const long nt = static_cast<long>(args[2]);
    ex::print_header(kProgram, ex::format("nx=%ld ny=%ld nt=%ld", nx, ny, nt));

    const std::vector<double> initial = initial_grid(nx, ny);
    std::vector<double> grid = initial;
    std::vector<double> scratch;
    const std::vector<double>* result = nullptr;
    const double seconds = ex::time_it([&] {
      cilk::run([&] { result = &heat_parallel(grid, scratch, nx, ny, nt); });
    });

    double total = 0.0;
    for (double v : *result) total += v;
    ex::print_result(ex::format("total heat after %ld steps = %.9f, centre temperature = %.9f", nt, total,
                                (*result)[static_cast<std::size_t>((nx / 2) * ny + ny / 2)]));
    const std::vector<double> expected = heat_serial(initial, nx, ny, nt);
    if (std::memcmp(expected.data(), result->data(), expected.size() * sizeof(double)) != 0) {
      for (std::size_t k = 0; k < expected.size(); ++k) {
        if (expected[k] != (*result)[k]) {
          ex::verification_failed(kProgram, ex::format("cell (%ld, %ld) is %.17g but the serial sweep gives %.17g",
                                                       static_cast<long>(k) / ny, static_cast<long>(k) % ny,
                                                       (*result)[k], expected[k]));
        }
      }
    }
    ex::print_verified("identical to a serial sweep, bit for bit");
    ex::print_time(seconds);
  });
}
