// fft: the discrete Fourier transform of n complex points (n a power of two) by
// the recursive radix-2 Cooley-Tukey algorithm. The two half-size transforms
// (even and odd samples) are spawned, and the butterflies that combine them run
// in a parallel_for when the transform is large. Transforms of at most 1024
// points run serially; the twiddle factors come from one shared table that is
// itself filled in parallel.
#include <cilk/cilk.hpp>

#include <cmath>
#include <cfloat>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "common/example_support.hpp"

namespace ex = cilk_examples;

namespace {

const ex::Program kProgram{
    "fft",
    "Computes the discrete Fourier transform of n random complex points (n a power of two)\n"
    "with recursive radix-2 Cooley-Tukey: spawned half transforms, parallel_for butterflies.\n"
    "Verified by an inverse-transform round trip and by naive DFT sums on sampled bins.",
    {{"n", "number of points, a power of two", 1L << 23, 1, 1L << 28}}};

using Complex = std::complex<double>;

constexpr long kSerialSize = 1024;        // transforms this small run serially
constexpr long kButterflyGrain = 4096;    // butterflies per parallel_for chunk

// Complex product written out: the operator* of std::complex calls a library
// routine for IEEE infinities and NaNs, which would dominate the butterflies.
inline Complex multiply(Complex a, Complex b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

// Butterflies for k in [begin, end): out[k], out[k + half] from the two halves.
inline void butterflies(Complex* out, long half, const Complex* twiddles, long twiddle_stride, long begin,
                        long end) {
  for (long k = begin; k < end; ++k) {
    const Complex even = out[k];
    const Complex odd = multiply(twiddles[k * twiddle_stride], out[k + half]);
    out[k] = even + odd;
    out[k + half] = even - odd;
  }
}

// out[0, n) = DFT of in[0], in[stride], ..., in[(n-1) stride]. twiddles[j] =
// exp(-2 pi i j / N) for the full size N; this level uses every (N/n)-th entry.
__attribute__((noinline)) void fft_serial(const Complex* in, long stride, Complex* out, long n,
                                          const Complex* twiddles, long twiddle_stride) {
  if (n == 1) {
    out[0] = in[0];
    return;
  }
  const long half = n / 2;
  fft_serial(in, 2 * stride, out, half, twiddles, 2 * twiddle_stride);
  fft_serial(in + stride, 2 * stride, out + half, half, twiddles, 2 * twiddle_stride);
  butterflies(out, half, twiddles, twiddle_stride, 0, half);
}

__attribute__((noinline)) void fft_parallel(const Complex* in, long stride, Complex* out, long n,
                                            const Complex* twiddles, long twiddle_stride) {
  if (n <= kSerialSize) {
    fft_serial(in, stride, out, n, twiddles, twiddle_stride);
    return;
  }
  const long half = n / 2;
  cilk::scope scope;
  scope.spawn([=] { fft_parallel(in, 2 * stride, out, half, twiddles, 2 * twiddle_stride); });
  fft_parallel(in + stride, 2 * stride, out + half, half, twiddles, 2 * twiddle_stride);
  scope.sync();
  const long chunks = (half + kButterflyGrain - 1) / kButterflyGrain;
  cilk::parallel_for(0L, chunks, [=](long c) {
    const long begin = c * kButterflyGrain;
    const long end = begin + kButterflyGrain < half ? begin + kButterflyGrain : half;
    butterflies(out, half, twiddles, twiddle_stride, begin, end);
  });
}

// Forward DFT of in into out (both n points), twiddle table included.
void fft(const std::vector<Complex>& in, std::vector<Complex>& out) {
  const long n = static_cast<long>(in.size());
  std::vector<Complex> twiddles(static_cast<std::size_t>(n / 2 > 0 ? n / 2 : 1));
  cilk::parallel_for(0L, n / 2, [&](long j) { twiddles[j] = std::polar(1.0, -2.0 * M_PI * j / n); });
  fft_parallel(in.data(), 1, out.data(), n, twiddles.data(), 1);
}

double l2_norm(const std::vector<Complex>& v) {
  double s = 0.0;
  for (const Complex& c : v) s += std::norm(c);
  return std::sqrt(s);
}

// Inverse by conjugation: x = conj(DFT(conj(X))) / n. Empty string if it
// reproduces the input to within rounding.
std::string check_round_trip(const std::vector<Complex>& input, const std::vector<Complex>& spectrum) {
  const long n = static_cast<long>(input.size());
  std::vector<Complex> conjugated(spectrum.size());
  for (std::size_t k = 0; k < spectrum.size(); ++k) conjugated[k] = std::conj(spectrum[k]);
  std::vector<Complex> back(spectrum.size());
  cilk::run([&] { fft(conjugated, back); });
  std::vector<Complex> diff(input.size());
  for (std::size_t j = 0; j < input.size(); ++j) diff[j] = std::conj(back[j]) / static_cast<double>(n) - input[j];
  const double error = l2_norm(diff);
  const double allowed = 16.0 * (std::log2(static_cast<double>(n)) + 1.0) * DBL_EPSILON * l2_norm(input);
  if (error <= allowed) return {};
  return ex::format("inverse transform does not reproduce the input: L2 error %.3g, allowed %.3g", error,
                    allowed);
}

// Naive O(n) DFT sums for a few bins, with a full-circle table of exact roots.
std::string check_sampled_bins(const std::vector<Complex>& input, const std::vector<Complex>& spectrum) {
  const long n = static_cast<long>(input.size());
  std::vector<Complex> roots(static_cast<std::size_t>(n));
  for (long j = 0; j < n; ++j) roots[j] = std::polar(1.0, -2.0 * M_PI * j / n);
  double magnitude = 0.0;
  for (const Complex& c : input) magnitude += std::abs(c);
  const double allowed = 64.0 * (std::log2(static_cast<double>(n)) + 1.0) * DBL_EPSILON * magnitude;
  ex::Random rng(0xFF7);
  for (int s = 0; s < 8; ++s) {
    const long k = s == 0 ? 0 : static_cast<long>(rng.below(static_cast<std::uint64_t>(n)));
    Complex sum = 0.0;
    for (long j = 0; j < n; ++j) sum += multiply(input[j], roots[static_cast<std::size_t>((static_cast<std::uint64_t>(j) * k) % n)]);
    if (!(std::abs(sum - spectrum[k]) <= allowed)) {
      return ex::format("bin %ld is (%.12g, %.12g) but the naive DFT sum gives (%.12g, %.12g)", k,
                        spectrum[k].real(), spectrum[k].imag(), sum.real(), sum.imag());
    }
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const long n = static_cast<long>(ex::parse_args(kProgram, argc, argv)[0]);
    if ((n & (n - 1)) != 0) ex::usage_error(kProgram, ex::format("argument n: %ld is not a power of two", n));
    ex::print_header(kProgram, ex::format("n=%ld", n));

    std::vector<Complex> input(static_cast<std::size_t>(n));
    ex::Random rng(41);
    for (Complex& c : input) c = Complex(rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0));
    std::vector<Complex> spectrum(input.size());

    const double seconds = ex::time_it([&] { cilk::run([&] { fft(input, spectrum); }); });

    ex::print_result(ex::format("DFT of %ld points; X[0] = (%.9f, %.9f), |X|_2 = %.6f", n, spectrum[0].real(),
                                spectrum[0].imag(), l2_norm(spectrum)));
    std::string why = check_sampled_bins(input, spectrum);
    if (why.empty()) why = check_round_trip(input, spectrum);
    if (!why.empty()) ex::verification_failed(kProgram, why);
    ex::print_verified("naive DFT sums on 8 sampled bins and an inverse-transform round trip");
    ex::print_time(seconds);
  });
}
