// Dense row-major matrices for the linear-algebra examples (matmul, rectmul,
// strassen, lu, cholesky) and the randomized check they share.
//
// Verification by Freivalds' method: to check a computed product or factorization
// M = P Q against the original, multiply both sides by random vectors x and compare
// M x with P (Q x). That costs O(n^2) per vector instead of the O(n^3) of
// recomputing, yet a wrong entry anywhere changes M x with overwhelming
// probability. Floating-point rounding is allowed for by comparing each component
// against the magnitude bound |P| (|Q| |x|), the quantity rounding errors scale with.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "example_support.hpp"

namespace cilk_examples {

struct Matrix {
  long rows = 0;
  long cols = 0;
  std::vector<double> data;

  Matrix() = default;
  Matrix(long r, long c) : rows(r), cols(c), data(static_cast<std::size_t>(r) * c, 0.0) {}
  double& at(long i, long j) { return data[static_cast<std::size_t>(i) * cols + j]; }
  double at(long i, long j) const { return data[static_cast<std::size_t>(i) * cols + j]; }
  double* row(long i) { return data.data() + static_cast<std::size_t>(i) * cols; }
  const double* row(long i) const { return data.data() + static_cast<std::size_t>(i) * cols; }
};

// A rows x cols matrix with entries uniform in [-1, 1), reproducible from seed.
inline Matrix random_matrix(long rows, long cols, std::uint64_t seed) {
  Matrix m(rows, cols);
  Random rng(seed);
  for (double& v : m.data) v = rng.uniform(-1.0, 1.0);
  return m;
}

inline std::vector<double> random_vector(long n, std::uint64_t seed) {
  std::vector<double> x(static_cast<std::size_t>(n));
  Random rng(seed);
  for (double& v : x) v = rng.uniform(-1.0, 1.0);
  return x;
}

inline std::vector<double> absolute(std::vector<double> v) {
  for (double& e : v) e = std::fabs(e);
  return v;
}

// y = op(M) x where op takes the absolute value of every entry if abs_entries.
inline std::vector<double> mat_vec(const Matrix& m, const std::vector<double>& x,
                                   bool abs_entries = false) {
  std::vector<double> y(static_cast<std::size_t>(m.rows), 0.0);
  for (long i = 0; i < m.rows; ++i) {
    const double* r = m.row(i);
    double s = 0.0;
    for (long j = 0; j < m.cols; ++j) s += (abs_entries ? std::fabs(r[j]) : r[j]) * x[j];
    y[i] = s;
  }
  return y;
}

// Compares computed against expected component by component; scale[i] bounds the
// magnitude of the terms that were summed into component i. Returns an empty
// string when every |computed - expected| <= tolerance * scale (+ a tiny absolute
// floor), otherwise a description of the worst component.
inline std::string compare_vectors(const std::vector<double>& computed,
                                   const std::vector<double>& expected,
                                   const std::vector<double>& scale, double tolerance) {
  double worst_ratio = 0.0;
  long worst = -1;
  for (std::size_t i = 0; i < computed.size(); ++i) {
    const double err = std::fabs(computed[i] - expected[i]);
    const double allowed = tolerance * scale[i] + 1e-300;
    if (!(err <= allowed)) {  // also catches NaN
      const double ratio = std::isnan(err) ? INFINITY : err / allowed;
      if (worst < 0 || ratio > worst_ratio) {
        worst_ratio = ratio;
        worst = static_cast<long>(i);
      }
    }
  }
  if (worst < 0) return {};
  return format("component %ld differs: computed %.17g, expected %.17g (allowed error %.3g)", worst,
                computed[worst], expected[worst], tolerance * scale[worst]);
}

// Allowed relative error of a length-k dot product: the classical bound is about
// k * eps; the factor 4 absorbs the second product of the check itself. Methods
// with faster error growth than the classical algorithm (Strassen) pass a
// growth factor > 1.
inline double rounding_tolerance(long k, double growth = 1.0) {
  return 4.0 * growth * static_cast<double>(k + 1) * DBL_EPSILON;
}

// Freivalds check of C == A B with `trials` random vectors. Empty string on success.
inline std::string check_product(const Matrix& a, const Matrix& b, const Matrix& c,
                                 double growth = 1.0, int trials = 2) {
  const double tolerance = rounding_tolerance(a.cols + b.cols, growth);
  for (int t = 0; t < trials; ++t) {
    const std::vector<double> x = random_vector(c.cols, 0xF2E1u + t);
    const std::vector<double> expected = mat_vec(a, mat_vec(b, x));
    const std::vector<double> scale = mat_vec(a, mat_vec(b, absolute(x), true), true);
    std::string why = compare_vectors(mat_vec(c, x), expected, scale, tolerance);
    if (!why.empty()) return why;
  }
  return {};
}

// Entry (i, j) of A B by a plain dot product, for spot checks and messages.
inline double naive_entry(const Matrix& a, const Matrix& b, long i, long j) {
  double s = 0.0;
  for (long k = 0; k < a.cols; ++k) s += a.at(i, k) * b.at(k, j);
  return s;
}

// Spot check: `samples` random entries of C against naive dot products, relative
// to sum_k |a_ik b_kj|. Complements the Freivalds check with a direct comparison.
inline std::string check_sampled_entries(const Matrix& a, const Matrix& b, const Matrix& c,
                                         double growth = 1.0, int samples = 64) {
  if (c.rows == 0 || c.cols == 0) return {};
  const double tolerance = rounding_tolerance(a.cols, growth);
  Random rng(0x5A3Bu);
  for (int s = 0; s < samples; ++s) {
    const long i = static_cast<long>(rng.below(static_cast<std::uint64_t>(c.rows)));
    const long j = static_cast<long>(rng.below(static_cast<std::uint64_t>(c.cols)));
    double scale = 0.0;
    for (long k = 0; k < a.cols; ++k) scale += std::fabs(a.at(i, k) * b.at(k, j));
    const double expected = naive_entry(a, b, i, j);
    const double err = std::fabs(c.at(i, j) - expected);
    if (!(err <= tolerance * scale + 1e-300)) {
      return format("C(%ld,%ld) = %.17g but the naive dot product gives %.17g", i, j, c.at(i, j),
                    expected);
    }
  }
  return {};
}

}  // namespace cilk_examples
